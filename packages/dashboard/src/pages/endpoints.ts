import type { Endpoint, EndpointStats } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import { healthChart, type HealthInterval } from "../charts.js";
import { canOperate, href, type PageContext } from "./context.js";
import { activityCard, probe } from "./endpoint-activity.js";
import { atLeast, badge, csrfField, jsonBlock, nextPageLink, percent, postButton, time } from "./format.js";
import { layout } from "./layout.js";

const HOUR = 3_600_000;

/** The endpoints: state, breaker, limits, the last hour's health, backlog, dead letters and failures. */
export async function endpointsPage(ctx: PageContext): Promise<Html> {
  const cursor = ctx.url.searchParams.get("cursor") ?? undefined;
  const [page, stats] = await Promise.all([
    ctx.ops.endpoints.list({ limit: 100, cursor }),
    ctx.ops.stats({ window: HOUR }),
  ]);
  const byId = new Map(stats.endpoints.map((line) => [line.id, line]));
  const rows = page.items.map((endpoint) =>
    endpointRow(ctx, endpoint, byId.get(endpoint.id), stats.countCap),
  );
  const body = html`<div class="table-wrap"><table>
<thead><tr><th>Endpoint</th><th>State</th><th>Limits</th><th>Last hour</th><th>Backlog</th><th>Dead letters</th><th>Failed</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="7">No endpoints yet.</td></tr>`}</tbody>
</table></div>${nextPageLink(ctx, page.nextCursor)}`;
  return layout(ctx, { title: "Endpoints", body });
}

function endpointRow(
  ctx: PageContext,
  endpoint: Endpoint,
  line: EndpointStats | undefined,
  cap: number | null,
): Html {
  return html`<tr>
<td data-label="Endpoint"><a href="${href(ctx, `/endpoints/${encodeURIComponent(endpoint.id)}`)}" class="mono">${endpoint.url}</a>
${endpoint.description ? html`<div class="muted">${endpoint.description}</div>` : ""}</td>
<td data-label="State">${badge(endpoint.state)}${breaker(ctx, endpoint)}</td>
<td data-label="Limits">${limits(endpoint)}</td>
<td data-label="Last hour">${line ? html`${line.attempts} attempts · ${percent(line.failureRate)} failed` : "—"}</td>
<td data-label="Backlog">${line ? html`${line.due} due · ${line.scheduled} scheduled · ${line.held} held` : "—"}</td>
<td data-label="Dead letters">${finishedLink(ctx, endpoint.id, line?.deadLetters ?? 0, cap, undefined)}</td>
<td data-label="Failed">${finishedLink(ctx, endpoint.id, line?.failed ?? 0, cap, "failed")}</td>
</tr>`;
}

/** A count of dead letters or of permanent failures, linked to their list filtered to the endpoint. */
function finishedLink(
  ctx: PageContext,
  endpointId: string,
  n: number,
  cap: number | null,
  status: "failed" | undefined,
): Html | string {
  return n > 0
    ? html`<a href="${href(ctx, "/dead-letters", { status, endpoint: endpointId })}">${atLeast(n, cap)}</a>`
    : "0";
}

function breaker(ctx: PageContext, endpoint: Endpoint): Html {
  if (endpoint.state === "circuit-open") {
    const cooling = endpoint.circuitOpenUntil !== null && endpoint.circuitOpenUntil > ctx.now;
    return html`<div class="muted">${probe(ctx, cooling ? endpoint.circuitOpenUntil : null, !cooling)}</div>`;
  }
  if (endpoint.state === "disabled" && endpoint.disabledReason)
    return html`<div class="muted">${endpoint.disabledReason}</div>`;
  return html``;
}

function limits(endpoint: Endpoint): string {
  const inFlight =
    endpoint.maxInFlight === null ? "default in flight" : `≤ ${endpoint.maxInFlight} in flight`;
  const rate = endpoint.rateLimit === null ? "default rate" : `≤ ${endpoint.rateLimit}/s`;
  return `${inFlight} · ${rate}`;
}

/** Windows whose differences give the health intervals, newest last. */
const WINDOWS = [
  { ms: 24 * HOUR, label: "6–24h ago" },
  { ms: 6 * HOUR, label: "1–6h ago" },
  { ms: HOUR, label: "5m–1h ago" },
  { ms: 5 * 60_000, label: "last 5m" },
];

/** One endpoint: why it fails (or that it does not), its settings, health over time and the operator's actions on it. */
export async function endpointPage(ctx: PageContext, id: string): Promise<Html | null> {
  const endpoint = await ctx.ops.endpoints.get(id);
  if (!endpoint) return null;
  const [activity, ...windows] = await Promise.all([
    ctx.ops.endpoints.activity(id),
    ...WINDOWS.map((w) => ctx.ops.stats({ window: w.ms, endpointId: id })),
  ]);
  const lines = windows.map((stats) => stats.endpoints.find((line) => line.id === id));
  const intervals: HealthInterval[] = WINDOWS.map((w, i) => {
    const line = lines[i];
    const inner = lines[i + 1];
    return {
      label: w.label,
      attempts: (line?.attempts ?? 0) - (inner?.attempts ?? 0),
      failures: (line?.failures ?? 0) - (inner?.failures ?? 0),
    };
  });
  const current = lines[2];
  const cap = windows[2]?.countCap ?? null;
  const base = `/endpoints/${encodeURIComponent(id)}`;
  const operate = canOperate(ctx);
  const body = html`<p class="mono">${endpoint.url}</p>
${endpoint.description ? html`<p>${endpoint.description}</p>` : ""}
<section class="cards">
<div class="card"><h2>State</h2><p>${badge(endpoint.state)}${breaker(ctx, endpoint)}</p>
${operate ? html`<div class="actions">${stateButtons(ctx, endpoint)}</div>` : ""}</div>
<div class="card"><h2>Last hour</h2><p>${current?.attempts ?? 0} attempts · ${percent(current?.failureRate ?? null)} failed</p>
<p>${current?.due ?? 0} due · ${current?.inFlight ?? 0} in flight · ${current?.scheduled ?? 0} scheduled · ${current?.held ?? 0} held</p>
<p><a href="${href(ctx, "/dead-letters", { endpoint: id })}" id="endpoint-dead-letters">${atLeast(current?.deadLetters ?? 0, cap)} dead letters</a> · <a href="${href(ctx, "/dead-letters", { status: "failed", endpoint: id })}" id="endpoint-failed">${atLeast(current?.failed ?? 0, cap)} failed permanently</a></p></div>
<div class="card"><h2>Limits</h2><p>${limits(endpoint)}</p></div>
</section>
${activityCard(ctx, activity)}
<h2>Health over time</h2>
${healthChart(intervals, "Share of failed attempts per interval")}
${operate ? secretActions(ctx, base) : ""}
<h2>Settings</h2>
<dl class="fields">
<dt>Id</dt><dd><span class="mono id">${endpoint.id}</span></dd>
<dt>Tenant</dt><dd>${endpoint.tenantId ?? "—"}</dd>
<dt>Event types</dt><dd class="mono">${endpoint.types.join(", ")}</dd>
<dt>Filter</dt><dd>${endpoint.filter ? jsonBlock(endpoint.filter) : (endpoint.filterFn ?? "—")}</dd>
<dt>Transform</dt><dd>${endpoint.transform ?? "—"}</dd>
<dt>Headers</dt><dd>${headerNames(endpoint)}</dd>
<dt>On key failure</dt><dd id="on-key-failure">${endpoint.onKeyFailure}${endpoint.onKeyFailure === "hold" ? html` · <a href="${href(ctx, "/held-keys", { endpoint: id })}">its held keys</a>` : ""}</dd>
<dt>Retry policy</dt><dd>${endpoint.retryPolicy ? jsonBlock(endpoint.retryPolicy) : "default"}</dd>
<dt>Circuit breaker</dt><dd>${endpoint.circuitBreaker ? jsonBlock(endpoint.circuitBreaker) : "default"}</dd>
<dt>Auto-disable</dt><dd>${endpoint.autoDisable ? jsonBlock(endpoint.autoDisable) : "default"}</dd>
<dt>Metadata</dt><dd>${jsonBlock(endpoint.metadata)}</dd>
<dt>Created</dt><dd>${time(endpoint.createdAt, ctx.now)}</dd>
<dt>Updated</dt><dd>${time(endpoint.updatedAt, ctx.now)}</dd>
</dl>`;
  return layout(ctx, { title: endpoint.description || endpoint.id, body });
}

function stateButtons(ctx: PageContext, endpoint: Endpoint): Html {
  const base = `/endpoints/${encodeURIComponent(endpoint.id)}`;
  if (endpoint.state === "disabled") return postButton(ctx, href(ctx, `${base}/enable`), "Enable");
  return html`${endpoint.state === "circuit-open" ? postButton(ctx, href(ctx, `${base}/enable`), "Close circuit") : ""}${postButton(ctx, href(ctx, `${base}/disable`), "Disable", html``, "danger")}`;
}

// Admins only: a read-only operator neither rotates nor sees a secret.
function secretActions(ctx: PageContext, base: string): Html {
  return html`<h2>Signing secret</h2>
<div class="actions">
<form method="post" action="${href(ctx, `${base}/rotate-secret`)}" class="inline">${csrfField(ctx)}
<label>Old secret keeps signing for <select name="overlap">
<option value="0">no overlap</option><option value="3600000">1 hour</option><option value="86400000" selected>24 hours</option><option value="604800000">7 days</option>
</select></label> <button type="submit">Rotate secret</button></form>
${postButton(ctx, href(ctx, `${base}/reveal-secret`), "Reveal secret")}
</div>`;
}

// Custom headers often carry credentials (an Authorization for the receiver): names only.
function headerNames(endpoint: Endpoint): Html {
  const names = Object.keys(endpoint.headers);
  return names.length === 0
    ? html`—`
    : html`${names.map((name) => html`<span class="mono">${name}: ••••</span> `)}`;
}

/** The answer to "reveal secret": one secret, on a page of its own that is never cached. */
export function secretPage(ctx: PageContext, endpoint: Endpoint, secret: string): Html {
  const body = html`<p>The newest signing secret of <span class="mono">${endpoint.url}</span>. Give it to the
receiver that verifies this endpoint's webhooks; it is shown once, on this page only.</p>
<p><code class="secret" id="secret">${secret}</code></p>
<p><a href="${href(ctx, `/endpoints/${encodeURIComponent(endpoint.id)}`)}">Back to the endpoint</a></p>`;
  return layout(ctx, { title: "Signing secret", body });
}
