import { type DeadLettersApi, type Endpoint, type FailureStatus, InvalidInputError } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import type { DeadLetterFilter, Operations } from "../ops.js";
import { canOperate, href, type PageContext } from "./context.js";
import { atLeast, csrfField, nextPageLink, pageSize, parseUtc, printable, time, utcField } from "./format.js";
import { layout } from "./layout.js";

/** Endpoints the filter's id field suggests (any other id can still be typed in). */
const SUGGESTED_ENDPOINTS = 1_000;

/**
 * One of the two lists of finished deliveries that did not arrive, and the words and audit actions
 * that go with it: dead letters used up their retries; failed ones were refused for good (a
 * non-retryable 4xx such as 410 Gone, a forbidden address) and were never retried.
 */
export interface FinishedList {
  status: FailureStatus;
  /** Its `?status=` (none for dead letters, the default). */
  query: "failed" | undefined;
  title: string;
  one: string;
  many: string;
  /** Its column of when the delivery finished. */
  when: string;
  empty: string;
  /** The audit actions of its bulk replays: `<prefix>.replay` and `<prefix>.replay-all`. */
  audit: "dead-letters" | "failed";
  api: (ops: Operations) => DeadLettersApi;
}

const LISTS: Record<FailureStatus, FinishedList> = {
  "dead-lettered": {
    status: "dead-lettered",
    query: undefined,
    title: "Dead letters",
    one: "dead letter",
    many: "dead letters",
    when: "Dead-lettered",
    empty: "No dead letters match.",
    audit: "dead-letters",
    api: (ops) => ops.deadLetters,
  },
  failed: {
    status: "failed",
    query: "failed",
    title: "Failed permanently",
    one: "failed delivery",
    many: "failed deliveries",
    when: "Failed",
    empty: "No permanently failed deliveries match.",
    audit: "failed",
    api: (ops) => ops.failed,
  },
};

/** The list a query string or form names with `status` (`failed`, else the dead letters). */
export function finishedList(params: URLSearchParams): FinishedList {
  const status = params.get("status") || "dead-lettered";
  if (status !== "dead-lettered" && status !== "failed") {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      'status must be "dead-lettered" (the dead letters, the default) or "failed" (deliveries that failed permanently). Nothing was done.',
    );
  }
  return LISTS[status];
}

/** The dead-letter filter of a query string or a form (`endpoint`, `since`, `until` in UTC). */
export function deadLetterFilter(params: URLSearchParams): DeadLetterFilter {
  return {
    endpointId: params.get("endpoint")?.trim() || undefined,
    since: parseUtc(params.get("since")),
    until: parseUtc(params.get("until")),
  };
}

const freshField = html`<label><input type="checkbox" name="fresh" value="1"> fresh <span class="mono">webhook-id</span></label>`;

/**
 * Dead letters (or, with `?status=failed`, the deliveries that failed permanently), newest first,
 * with replay of one, a selection, or everything matching the filter.
 */
export async function deadLettersPage(ctx: PageContext): Promise<Html> {
  const list = finishedList(ctx.url.searchParams);
  const filter = deadLetterFilter(ctx.url.searchParams);
  const cursor = ctx.url.searchParams.get("cursor") || undefined;
  const [page, suggested, counts] = await Promise.all([
    list.api(ctx.ops).list({ ...filter, cursor, limit: pageSize(ctx.url.searchParams) }),
    ctx.ops.endpoints.list({ limit: SUGGESTED_ENDPOINTS }),
    // Only its counts are read: the shortest window keeps the attempt sums it also returns cheap.
    ctx.ops.stats({ window: 1, endpointId: filter.endpointId }),
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
<td data-label="Last error">${d.lastError === null ? "—" : printable(d.lastError)}</td>
<td data-label="${list.when}">${time(d.deadLetteredAt, ctx.now)}</td>
${operate ? html`<td data-label="Replay"><button type="submit" name="only" value="${d.messageId} ${d.endpointId}">Replay</button></td>` : ""}
</tr>`,
  );
  const columns = operate ? 7 : 5;
  const table = html`<div class="table-wrap"><table>
<thead><tr>${operate ? html`<th></th>` : ""}<th>Message</th><th>Endpoint</th><th>Attempts</th><th>Last error</th><th>${list.when}</th>${operate ? html`<th></th>` : ""}</tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="${columns}">${list.empty}</td></tr>`}</tbody>
</table></div>`;
  const statusField = list.query ? html`<input type="hidden" name="status" value="${list.query}">` : "";
  const filterFields = html`${statusField}<input type="hidden" name="endpoint" value="${filter.endpointId ?? ""}">
<input type="hidden" name="since" value="${utcField(filter.since)}"><input type="hidden" name="until" value="${utcField(filter.until)}">`;
  const tab = (other: FinishedList, n: number) =>
    html`<a href="${href(ctx, "/dead-letters", { status: other.query, endpoint: filter.endpointId })}" id="tab-${other.audit}"${other === list ? html` aria-current="page"` : ""}>${other.title} <span class="count">${atLeast(n, counts.countCap)}</span></a>`;
  const body = html`<nav class="tabs" aria-label="Finished deliveries that did not arrive">${tab(LISTS["dead-lettered"], counts.deadLetters)}${tab(LISTS.failed, counts.failed)}</nav>
<p class="muted">${list.status === "failed" ? "Refused for good by the receiver (a non-retryable 4xx such as 410 Gone) or never sent (a forbidden address): not retried." : "Used up their retries."} Counts are of ${filter.endpointId ? "this endpoint" : "every endpoint"}, at any time.</p>
<form method="get" class="filters" action="${href(ctx, "/dead-letters")}">${statusField}
<label>Endpoint id <input name="endpoint" list="endpoint-ids" value="${filter.endpointId ?? ""}" placeholder="any (ep_…)" autocomplete="off"></label>
<datalist id="endpoint-ids">${suggested.items.map((e) => html`<option value="${e.id}">${e.url}</option>`)}</datalist>
<label>${list.when} from (UTC) <input type="datetime-local" name="since" value="${utcField(filter.since)}"></label>
<label>To (UTC) <input type="datetime-local" name="until" value="${utcField(filter.until)}"></label>
<button type="submit">Filter</button>
</form>
${
  operate
    ? html`<form method="post" action="${href(ctx, "/dead-letters/replay")}" id="selection">${csrfField(ctx)}${statusField}
${table}
<div class="actions">${freshField}<button type="submit" name="selected" value="1">Replay selected…</button></div>
</form>
${nextPageLink(ctx, page.nextCursor)}
<form method="post" action="${href(ctx, "/dead-letters/replay-all")}" class="actions">${csrfField(ctx)}${filterFields}
${freshField}<button type="submit" class="danger">Replay everything matching this filter…</button></form>
<p class="muted">Replaying several asks first, with the count. Replaying a message re-sends each of its ${list.many}.</p>`
    : html`${table}${nextPageLink(ctx, page.nextCursor)}`
}`;
  return layout(ctx, { title: list.title, body });
}
