import type { Endpoint } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import type { DeadLetterFilter } from "../ops.js";
import { canOperate, href, type PageContext } from "./context.js";
import { csrfField, nextPageLink, pageSize, parseUtc, time, utcField } from "./format.js";
import { layout } from "./layout.js";

/** Endpoints the filter's id field suggests (any other id can still be typed in). */
const SUGGESTED_ENDPOINTS = 1_000;

/** The dead-letter filter of a query string or a form (`endpoint`, `since`, `until` in UTC). */
export function deadLetterFilter(params: URLSearchParams): DeadLetterFilter {
  return {
    endpointId: params.get("endpoint")?.trim() || undefined,
    since: parseUtc(params.get("since")),
    until: parseUtc(params.get("until")),
  };
}

const freshField = html`<label><input type="checkbox" name="fresh" value="1"> fresh <span class="mono">webhook-id</span></label>`;

/** Dead letters, newest first, with replay of one, a selection, or everything matching the filter. */
export async function deadLettersPage(ctx: PageContext): Promise<Html> {
  const filter = deadLetterFilter(ctx.url.searchParams);
  const cursor = ctx.url.searchParams.get("cursor") || undefined;
  const [page, suggested] = await Promise.all([
    ctx.ops.deadLetters.list({ ...filter, cursor, limit: pageSize(ctx.url.searchParams) }),
    ctx.ops.endpoints.list({ limit: SUGGESTED_ENDPOINTS }),
  ]);
  const shown = [...new Set(page.items.map((d) => d.endpointId))];
  const endpoints = new Map<string, Endpoint | null>(
    await Promise.all(shown.map(async (id) => [id, await ctx.ops.endpoints.get(id)] as const)),
  );
  const operate = canOperate(ctx);
  const rows = page.items.map(
    (d) => html`<tr>
${operate ? html`<td data-label="Select"><input type="checkbox" name="delivery" value="${d.messageId} ${d.endpointId}" aria-label="select ${d.messageId}"></td>` : ""}
<td data-label="Message"><a class="mono id" href="${href(ctx, `/messages/${encodeURIComponent(d.messageId)}`)}">${d.messageId}</a><div class="muted mono">${d.type}${d.tenantId ? html` · ${d.tenantId}` : ""}</div></td>
<td data-label="Endpoint" class="mono">${endpoints.get(d.endpointId)?.url ?? d.endpointId}</td>
<td data-label="Attempts">${d.attemptsMade}</td>
<td data-label="Last error">${d.lastError ?? "—"}</td>
<td data-label="Dead-lettered">${time(d.deadLetteredAt, ctx.now)}</td>
${operate ? html`<td data-label="Replay"><button type="submit" name="only" value="${d.messageId} ${d.endpointId}">Replay</button></td>` : ""}
</tr>`,
  );
  const columns = operate ? 7 : 5;
  const table = html`<div class="table-wrap"><table>
<thead><tr>${operate ? html`<th></th>` : ""}<th>Message</th><th>Endpoint</th><th>Attempts</th><th>Last error</th><th>Dead-lettered</th>${operate ? html`<th></th>` : ""}</tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="${columns}">No dead letters match.</td></tr>`}</tbody>
</table></div>`;
  const filterFields = html`<input type="hidden" name="endpoint" value="${filter.endpointId ?? ""}">
<input type="hidden" name="since" value="${utcField(filter.since)}"><input type="hidden" name="until" value="${utcField(filter.until)}">`;
  const body = html`<form method="get" class="filters" action="${href(ctx, "/dead-letters")}">
<label>Endpoint id <input name="endpoint" list="endpoint-ids" value="${filter.endpointId ?? ""}" placeholder="any (ep_…)" autocomplete="off"></label>
<datalist id="endpoint-ids">${suggested.items.map((e) => html`<option value="${e.id}">${e.url}</option>`)}</datalist>
<label>Dead-lettered from (UTC) <input type="datetime-local" name="since" value="${utcField(filter.since)}"></label>
<label>To (UTC) <input type="datetime-local" name="until" value="${utcField(filter.until)}"></label>
<button type="submit">Filter</button>
</form>
${
  operate
    ? html`<form method="post" action="${href(ctx, "/dead-letters/replay")}" id="selection">${csrfField(ctx)}
${table}
<div class="actions">${freshField}<button type="submit" name="selected" value="1">Replay selected…</button></div>
</form>
${nextPageLink(ctx, page.nextCursor)}
<form method="post" action="${href(ctx, "/dead-letters/replay-all")}" class="actions">${csrfField(ctx)}${filterFields}
${freshField}<button type="submit" class="danger">Replay everything matching this filter…</button></form>
<p class="muted">Replaying several asks first, with the count. Replaying a message re-sends each of its dead-lettered deliveries.</p>`
    : html`${table}${nextPageLink(ctx, page.nextCursor)}`
}`;
  return layout(ctx, { title: "Dead letters", body });
}
