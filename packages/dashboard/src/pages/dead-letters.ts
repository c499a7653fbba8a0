import { type Html, html } from "@postel/web-kit";
import type { DeadLetterFilter } from "../ops.js";
import { href, type PageContext } from "./context.js";
import { csrfField, nextPageLink, pageSize, parseUtc, time, utcField } from "./format.js";
import { layout } from "./layout.js";

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
  const [page, endpoints] = await Promise.all([
    ctx.ops.deadLetters.list({ ...filter, cursor, limit: pageSize(ctx.url.searchParams) }),
    ctx.ops.endpoints.list({ limit: 200 }),
  ]);
  const urls = new Map(endpoints.items.map((e) => [e.id, e.url]));
  const rows = page.items.map(
    (d) => html`<tr>
<td data-label="Select"><input type="checkbox" name="delivery" value="${d.messageId} ${d.endpointId}" aria-label="select ${d.messageId}"></td>
<td data-label="Message"><a class="mono" href="${href(ctx, `/messages/${encodeURIComponent(d.messageId)}`)}">${d.messageId}</a><div class="muted mono">${d.type}${d.tenantId ? html` · ${d.tenantId}` : ""}</div></td>
<td data-label="Endpoint" class="mono">${urls.get(d.endpointId) ?? d.endpointId}</td>
<td data-label="Attempts">${d.attemptsMade}</td>
<td data-label="Last error">${d.lastError ?? "—"}</td>
<td data-label="Dead-lettered">${time(d.deadLetteredAt, ctx.now)}</td>
<td data-label="Replay"><button type="submit" name="only" value="${d.messageId} ${d.endpointId}">Replay</button></td>
</tr>`,
  );
  const filterFields = html`<input type="hidden" name="endpoint" value="${filter.endpointId ?? ""}">
<input type="hidden" name="since" value="${utcField(filter.since)}"><input type="hidden" name="until" value="${utcField(filter.until)}">`;
  const body = html`<form method="get" class="filters" action="${href(ctx, "/dead-letters")}">
<label>Endpoint <select name="endpoint"><option value="">any</option>${endpoints.items.map(
    (e) =>
      html`<option value="${e.id}"${filter.endpointId === e.id ? html` selected` : ""}>${e.url}</option>`,
  )}</select></label>
<label>Dead-lettered from (UTC) <input type="datetime-local" name="since" value="${utcField(filter.since)}"></label>
<label>To (UTC) <input type="datetime-local" name="until" value="${utcField(filter.until)}"></label>
<button type="submit">Filter</button>
</form>
<form method="post" action="${href(ctx, "/dead-letters/replay")}" id="selection">${csrfField(ctx)}
<div class="table-wrap"><table>
<thead><tr><th></th><th>Message</th><th>Endpoint</th><th>Attempts</th><th>Last error</th><th>Dead-lettered</th><th></th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="7">No dead letters match.</td></tr>`}</tbody>
</table></div>
<div class="actions">${freshField}<button type="submit" name="selected" value="1">Replay selected</button></div>
</form>
${nextPageLink(ctx, page.nextCursor)}
<form method="post" action="${href(ctx, "/dead-letters/replay-all")}" class="actions">${csrfField(ctx)}${filterFields}
${freshField}<button type="submit" class="danger">Replay everything matching this filter</button></form>
<p class="muted">Replaying a message re-sends each of its dead-lettered deliveries.</p>`;
  return layout(ctx, { title: "Dead letters", body });
}
