import type { AttemptRecord, DeliveryRecord, Endpoint, MessageStatus } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import type { MessageFilter } from "../ops.js";
import { canOperate, href, type PageContext } from "./context.js";
import {
  badge,
  csrfField,
  formatTime,
  jsonBlock,
  nextPageLink,
  pageSize,
  parseUtc,
  postButton,
  printable,
  snippet,
  time,
  utcField,
} from "./format.js";
import { layout } from "./layout.js";

const STATUSES: MessageStatus[] = ["pending", "dispatched", "dead-lettered", "expired"];

/** The messages, newest first, filtered by type, status, tenant and time, one keyset page at a time. */
export async function messagesPage(ctx: PageContext): Promise<Html | Response> {
  const params = ctx.url.searchParams;
  const id = params.get("id")?.trim();
  if (id) {
    const found = await ctx.ops.messages.get(id);
    if (found)
      return Response.redirect(new URL(href(ctx, `/messages/${encodeURIComponent(id)}`), ctx.url), 303);
  }
  const status = params.get("status") as MessageStatus | null;
  const filter: MessageFilter = {
    status: status && STATUSES.includes(status) ? status : undefined,
    type: params.get("type")?.trim() || undefined,
    tenantId: params.get("tenant")?.trim() || undefined,
    since: parseUtc(params.get("since")),
    until: parseUtc(params.get("until")),
    cursor: params.get("cursor") || undefined,
    limit: pageSize(params),
  };
  const page = await ctx.ops.messages.list(filter);
  const rows = page.items.map(
    (m) => html`<tr>
<td data-label="Id"><a class="mono id" href="${href(ctx, `/messages/${encodeURIComponent(m.id)}`)}">${m.id}</a></td>
<td data-label="Type" class="mono">${m.type}</td>
<td data-label="Status">${badge(m.status)}</td>
<td data-label="Tenant">${m.tenantId ?? "—"}</td>
<td data-label="Created">${time(m.createdAt, ctx.now)}</td>
</tr>`,
  );
  const body = html`<form method="get" class="filters" action="${href(ctx, "/messages")}">
<label>Id <input name="id" value="${id ?? ""}" placeholder="msg_…"></label>
<label>Type <input name="type" value="${filter.type ?? ""}" placeholder="order.created"></label>
<label>Status <select name="status"><option value="">any</option>${STATUSES.map(
    (s) => html`<option value="${s}"${filter.status === s ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
<label>Tenant <input name="tenant" value="${filter.tenantId ?? ""}"></label>
<label>From (UTC) <input type="datetime-local" name="since" value="${utcField(filter.since)}"></label>
<label>To (UTC) <input type="datetime-local" name="until" value="${utcField(filter.until)}"></label>
<button type="submit">Search</button>
</form>
${id ? html`<p class="notice warn" role="status">No message with id <span class="mono">${id}</span>.</p>` : ""}
<div class="table-wrap"><table>
<thead><tr><th>Id</th><th>Type</th><th>Status</th><th>Tenant</th><th>Created</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="5">${page.nextCursor === null ? "No messages match." : "None in the newest messages searched; older ones next."}</td></tr>`}</tbody>
</table></div>${nextPageLink(ctx, page.nextCursor)}`;
  return layout(ctx, { title: "Messages", body });
}

/** One message: its payload, its deliveries and the full attempt trail. */
export async function messagePage(ctx: PageContext, id: string): Promise<Html | null> {
  const message = await ctx.ops.messages.get(id);
  if (!message) return null;
  const [deliveries, attempts] = await Promise.all([
    ctx.ops.messages.deliveries(id),
    ctx.ops.messages.attempts(id),
  ]);
  const endpointIds = [...new Set(deliveries.map((d) => d.endpointId))];
  const endpoints = new Map<string, Endpoint | null>(
    await Promise.all(endpointIds.map(async (e) => [e, await ctx.ops.endpoints.get(e)] as const)),
  );
  const endpointLink = (endpointId: string) => {
    const endpoint = endpoints.get(endpointId);
    return html`<a class="mono" href="${href(ctx, `/endpoints/${encodeURIComponent(endpointId)}`)}">${endpoint?.url ?? endpointId}</a>`;
  };
  const operate = canOperate(ctx);
  const finished = (d: DeliveryRecord) => d.status !== "pending" && d.status !== "held";
  const terminal = deliveries.some(finished);
  const last = finalAttempts(deliveries, attempts);
  const replayOne = (d: DeliveryRecord) =>
    finished(d)
      ? postButton(
          ctx,
          href(ctx, `/messages/${encodeURIComponent(id)}/replay`),
          "Replay",
          html`<input type="hidden" name="endpoint" value="${d.endpointId}">`,
        )
      : "—";
  const body = html`<dl class="fields">
<dt>Id</dt><dd><span class="mono id">${message.id}</span></dd>
<dt>Type</dt><dd class="mono">${message.type}</dd>
<dt>Status</dt><dd>${badge(message.status)}</dd>
<dt>Tenant</dt><dd>${message.tenantId ?? "—"}</dd>
<dt>Idempotency key</dt><dd class="mono">${message.idempotencyKey ?? "—"}</dd>
<dt>Created</dt><dd>${time(message.createdAt, ctx.now)}</dd>
<dt>Expires</dt><dd>${time(message.expiresAt, ctx.now)}</dd>
<dt>Finished</dt><dd>${time(message.finishedAt, ctx.now)}</dd>
</dl>
<h2>Payload</h2>
${jsonBlock(message.data)}
<h2>Deliveries</h2>
<div class="table-wrap"><table>
<thead><tr><th>Endpoint</th><th>Status</th><th>Attempts</th><th>Next attempt</th><th>Last error</th><th>webhook-id</th>${operate ? html`<th></th>` : ""}</tr></thead>
<tbody>${
    deliveries.length > 0
      ? deliveries.map(
          (d) => html`<tr>
<td data-label="Endpoint">${endpointLink(d.endpointId)}</td>
<td data-label="Status">${badge(d.status)}</td>
<td data-label="Attempts">${d.attemptsMade} (${d.retriesUsed} retries)</td>
<td data-label="Next attempt">${d.status === "pending" ? time(d.nextAttemptAt, ctx.now) : "—"}</td>
<td data-label="Last error">${d.lastError === null ? "—" : printable(d.lastError)}</td>
<td data-label="webhook-id"><span class="mono id">${d.webhookId}</span></td>
${operate ? html`<td data-label="Replay">${replayOne(d)}</td>` : ""}
</tr>`,
        )
      : html`<tr><td colspan="${operate ? 7 : 6}">${noDeliveries(message)}</td></tr>`
  }</tbody></table></div>
${
  operate && terminal
    ? html`<form method="post" action="${href(ctx, `/messages/${encodeURIComponent(id)}/replay`)}" class="actions">${csrfField(ctx)}
<label><input type="checkbox" name="fresh" value="1"> fresh <span class="mono">webhook-id</span> (receivers that deduplicate process it again)</label>
<button type="submit">Replay finished deliveries</button></form>`
    : ""
}
<h2>Attempt trail</h2>
<div class="table-wrap"><table class="trail">
<thead><tr><th>#</th><th>Endpoint</th><th>Started</th><th>Outcome</th><th>Status</th><th>Latency</th><th>Error</th><th>Response</th></tr></thead>
<tbody>${
    attempts.length > 0
      ? attempts.map(
          (a) => html`<tr>
<td data-label="#">${a.attemptNumber}</td>
<td data-label="Endpoint">${endpointLink(a.endpointId)}</td>
<td data-label="Started">${formatTime(a.startedAt)}</td>
<td data-label="Outcome">${last.has(a.id) && a.outcome === "retryable" ? html`${badge("dead-lettered")}<div class="muted">retryable, no retries left</div>` : badge(a.outcome)}</td>
<td data-label="Status">${a.statusCode ?? a.errorCode ?? "—"}</td>
<td data-label="Latency">${a.latencyMs} ms</td>
<td data-label="Error">${a.error === null ? "—" : printable(a.error)}</td>
<td data-label="Response">${snippet(a.responseSnippet)}</td>
</tr>`,
        )
      : html`<tr><td colspan="8">No attempt yet.</td></tr>`
  }</tbody></table></div>`;
  return layout(ctx, { title: `Message ${message.id}`, body });
}

/** Why a message has no delivery: not fanned out yet, or fanned out to no endpoint at all. */
function noDeliveries(message: { status: MessageStatus; fannedOutAt: number | null }): string {
  if (message.fannedOutAt !== null)
    return "Matched no endpoint: no endpoint's types, tenant and filter took it.";
  return message.status === "pending" ? "Not fanned out yet." : "Never fanned out.";
}

/** The ids of each dead-lettered delivery's last attempt: the one after which no retry was left. */
function finalAttempts(deliveries: DeliveryRecord[], attempts: AttemptRecord[]): Set<string> {
  const dead = new Set(deliveries.filter((d) => d.status === "dead-lettered").map((d) => d.id));
  const last = new Map<string, string>();
  for (const attempt of attempts) if (dead.has(attempt.deliveryId)) last.set(attempt.deliveryId, attempt.id);
  return new Set(last.values());
}
