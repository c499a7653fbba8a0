import { type AttemptRecord, NotFoundError } from "@postel/core";
import {
  badge,
  formatTime,
  type Html,
  html,
  jsonBlock,
  nextPageLink,
  postButton,
  time,
} from "@postel/web-kit";
import type { TenantEndpoint } from "../scope.js";
import { href, type PageContext, seg } from "./context.js";
import { layout } from "./layout.js";

/** The tenant's messages, newest first, a keyset page at a time. */
export async function messagesPage(ctx: PageContext): Promise<Html> {
  const cursor = ctx.url.searchParams.get("cursor") || undefined;
  const page = await ctx.scope.listMessages({ cursor });
  const rows = page.items.map(
    (m) => html`<tr>
<td data-label="Event"><a class="mono" href="${href(ctx, `/messages/${seg(m.id)}`)}">${m.type}</a></td>
<td data-label="Status">${badge(m.status)}</td>
<td data-label="Sent">${time(m.createdAt, ctx.now)}</td>
<td data-label="Id" class="mono">${m.id}</td>
</tr>`,
  );
  const empty =
    page.nextCursor === null
      ? cursor === undefined
        ? "No events sent to you yet."
        : "No older events."
      : "None among the newest events searched; older ones next.";
  const body = html`<div class="table-wrap"><table>
<thead><tr><th>Event</th><th>Status</th><th>Sent</th><th>Id</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="4">${empty}</td></tr>`}</tbody>
</table></div>${nextPageLink(ctx.url, page.nextCursor)}`;
  return layout(ctx, { title: "Messages", body });
}

/** One message: its payload and, per delivery to the tenant's endpoints, the attempt trail. */
export async function messagePage(ctx: PageContext, id: string): Promise<Html> {
  const message = await ctx.scope.message(id);
  const deliveries = await ctx.scope.deliveries(id);
  const endpoints = new Map<string, TenantEndpoint | null>();
  for (const { delivery } of deliveries) {
    if (endpoints.has(delivery.endpointId)) continue;
    const endpoint = await ctx.scope.endpoint(delivery.endpointId).catch((error: unknown) => {
      if (error instanceof NotFoundError) return null; // deleted since
      throw error;
    });
    endpoints.set(delivery.endpointId, endpoint);
  }
  const sections = deliveries.map(({ delivery, attempts }) => {
    const endpoint = endpoints.get(delivery.endpointId) ?? null;
    const terminal = !["pending", "held"].includes(delivery.status);
    return html`<section aria-labelledby="${`d-${delivery.id}`}">
<h2 id="${`d-${delivery.id}`}">To ${endpoint === null ? html`a deleted endpoint` : html`<a class="mono" href="${href(ctx, `/endpoints/${seg(endpoint.id)}`)}">${endpoint.url}</a>`}</h2>
<dl class="fields">
<dt>Status</dt><dd>${badge(delivery.status)}</dd>
<dt>Attempts</dt><dd>${delivery.attemptsMade}</dd>
${delivery.status === "pending" ? html`<dt>Next attempt</dt><dd>${time(delivery.nextAttemptAt, ctx.now)}</dd>` : ""}
<dt>Last error</dt><dd>${delivery.lastError ?? "—"}</dd>
<dt><span class="mono">webhook-id</span></dt><dd class="mono">${delivery.webhookId}</dd>
</dl>
${
  terminal && endpoint !== null
    ? html`<p class="actions">${postButton(ctx.csrfToken, href(ctx, `/messages/${seg(message.id)}/deliveries/${seg(delivery.id)}/replay`), "Send again")}</p>`
    : ""
}
<div class="table-wrap"><table class="trail">
<thead><tr><th>#</th><th>Started</th><th>Outcome</th><th>Status</th><th>Latency</th><th>Error</th><th>Response</th><th>Request headers</th></tr></thead>
<tbody>${
      attempts.length > 0
        ? attempts.map(
            (a) => html`<tr>
<td data-label="#">${a.attemptNumber}</td>
<td data-label="Started">${formatTime(a.startedAt)}</td>
<td data-label="Outcome">${badge(a.outcome)}</td>
<td data-label="Status">${a.statusCode ?? a.errorCode ?? "—"}</td>
<td data-label="Latency">${a.latencyMs} ms</td>
<td data-label="Error">${a.error ?? "—"}</td>
<td data-label="Response">${a.responseSnippet ? html`<pre class="snippet">${a.responseSnippet}</pre>` : "—"}</td>
<td data-label="Request headers">${requestHeaders(a, endpoint)}</td>
</tr>`,
          )
        : html`<tr><td colspan="8">No attempt yet.</td></tr>`
    }</tbody></table></div>
</section>`;
  });
  const body = html`<dl class="fields">
<dt>Event</dt><dd class="mono">${message.type}</dd>
<dt>Id</dt><dd class="mono">${message.id}</dd>
<dt>Status</dt><dd>${badge(message.status)}</dd>
<dt>Sent</dt><dd>${time(message.createdAt, ctx.now)}</dd>
</dl>
<h2>Payload</h2>
${jsonBlock(message.data)}
${sections.length > 0 ? sections : html`<p class="empty">Not delivered to any of your endpoints yet.</p>`}`;
  return layout(ctx, { title: message.type, body });
}

/**
 * The headers Postel sent with an attempt: `webhook-id` and `webhook-timestamp` as the attempt
 * recorded them, the signature and every custom header's value masked (they are the app's, and a
 * signature is as good as a secret for replaying the request).
 */
export function requestHeaders(attempt: AttemptRecord, endpoint: TenantEndpoint | null): Html {
  const lines: [string, string][] = [
    ["content-type", "application/json"],
    ...(endpoint?.headerNames ?? []).map((name): [string, string] => [name.toLowerCase(), "••••••"]),
    ["webhook-id", attempt.webhookId],
    ["webhook-timestamp", String(Math.floor(attempt.startedAt / 1000))],
    ["webhook-signature", "v1,••••••"],
  ];
  return html`<pre class="snippet headers">${lines.map(([name, value]) => `${name}: ${value}\n`).join("")}</pre>`;
}
