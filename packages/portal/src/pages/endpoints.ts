import {
  badge,
  csrfField,
  formatTime,
  type Html,
  html,
  nextPageLink,
  postButton,
  time,
  utcField,
} from "@postel/web-kit";
import type { EventTypeInfo, TenantEndpoint } from "../scope.js";
import { href, type PageContext, seg } from "./context.js";
import { layout } from "./layout.js";

/** The tenant's endpoints: the portal's home. */
export async function endpointsPage(ctx: PageContext): Promise<Html> {
  const page = await ctx.scope.listEndpoints({ cursor: ctx.url.searchParams.get("cursor") || undefined });
  const rows = page.items.map(
    (e) => html`<tr>
<td data-label="URL"><a class="mono" href="${href(ctx, `/endpoints/${seg(e.id)}`)}">${e.url}</a>${e.description ? html`<div class="muted">${e.description}</div>` : ""}</td>
<td data-label="Events" class="mono">${e.types.join(", ")}</td>
<td data-label="State">${badge(e.state)}</td>
<td data-label="Added">${time(e.createdAt, ctx.now)}</td>
</tr>`,
  );
  const body = html`<p class="actions"><a class="button" href="${href(ctx, "/endpoints/new")}">Add an endpoint</a></p>
${
  rows.length === 0 && ctx.url.searchParams.get("cursor") === null
    ? html`<p class="empty">No endpoints yet. Add the URL of your server that should receive webhooks.</p>`
    : html`<div class="table-wrap"><table>
<thead><tr><th>URL</th><th>Events</th><th>State</th><th>Added</th></tr></thead>
<tbody>${rows}</tbody></table></div>${nextPageLink(ctx.url, page.nextCursor)}`
}`;
  return layout(ctx, { title: "Endpoints", body });
}

/** What the endpoint form shows: saved values, or what was just sent back with its error. */
export interface EndpointFormValues {
  url: string;
  description: string;
  types: string[];
  filter: string;
}

/** The form to add an endpoint, or to edit `endpoint`. */
export function endpointFormPage(
  ctx: PageContext,
  endpoint: TenantEndpoint | null,
  values: EndpointFormValues | null = null,
  error: string | null = null,
): Html {
  const shown: EndpointFormValues = values ?? {
    url: endpoint?.url ?? "",
    description: endpoint?.description ?? "",
    types: endpoint?.types ?? [],
    filter: endpoint?.filter ? JSON.stringify(endpoint.filter, null, 2) : "",
  };
  const action = endpoint === null ? href(ctx, "/endpoints") : href(ctx, `/endpoints/${seg(endpoint.id)}`);
  const body = html`${error === null ? "" : html`<p class="error" role="alert" id="form-error">${error}</p>`}
<form method="post" action="${action}" class="stack"${error === null ? "" : html` aria-describedby="form-error"`}>${csrfField(ctx.csrfToken)}
<label for="url">Endpoint URL <span>Where Postel POSTs each event, signed. It must be reachable from the internet over HTTPS.</span></label>
<input id="url" name="url" type="url" required maxlength="2048" value="${shown.url}" placeholder="https://example.com/webhooks" autocomplete="url">
<label for="description">Description <span>Optional: a note for you and your team.</span></label>
<input id="description" name="description" type="text" maxlength="500" value="${shown.description}">
${eventPicker(ctx.scope.eventTypes(), shown.types)}
<details${shown.filter ? html` open` : ""}><summary>Filter (advanced)</summary>
<label for="filter">Only events whose data matches this filter <span>JSON, e.g. {"data.amount": {"$gte": 100}}. Leave empty to receive every event of the types above.</span></label>
<textarea id="filter" name="filter" rows="4" spellcheck="false">${shown.filter}</textarea>
</details>
<p class="actions"><button type="submit" class="primary">${endpoint === null ? "Add endpoint" : "Save"}</button>
<a href="${endpoint === null ? href(ctx, "/") : href(ctx, `/endpoints/${seg(endpoint.id)}`)}">Cancel</a></p>
</form>`;
  return layout(ctx, { title: endpoint === null ? "Add an endpoint" : "Edit endpoint", body });
}

/** The catalog as checkboxes grouped as the catalog groups them; free text when Postel has no catalog. */
function eventPicker(types: EventTypeInfo[], chosen: string[]): Html {
  if (types.length === 0) {
    return html`<label for="types">Event types <span>Comma-separated types or globs, e.g. order.created, invoice.*; * for every event.</span></label>
<input id="types" name="types" type="text" required value="${chosen.join(", ")}">`;
  }
  const declared = new Set(types.map((t) => t.type));
  // Types without a group first, so none reads as part of the group above it.
  const groups = new Map<string, EventTypeInfo[]>([["", []]]);
  for (const type of types) {
    const group = type.group ?? "";
    groups.set(group, [...(groups.get(group) ?? []), type]);
  }
  // Globs an endpoint already has (set through the app's API) stay choosable, checked.
  const extra = chosen.filter((type) => type !== "*" && !declared.has(type));
  const box = (value: string, label: Html, desc: Html | string) => {
    const id = `type-${value.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0)}`)}`;
    return html`<label for="${id}"><input type="checkbox" id="${id}" name="types" value="${value}"${chosen.includes(value) ? html` checked` : ""}><span class="mono">${label}</span><span class="desc">${desc}</span></label>`;
  };
  return html`<fieldset class="picker"><legend>Events to receive</legend>
${box("*", html`All events`, "Every type below, and any added later.")}
${[...groups].map(
  ([group, list]) =>
    html`${group ? html`<h3>${group}</h3>` : ""}${list.map((t) =>
      box(
        t.type,
        html`${t.type}`,
        html`${t.description}${
          t.deprecated === null || t.deprecated === false
            ? ""
            : html` <span class="deprecated">Deprecated${typeof t.deprecated === "string" ? html`: ${t.deprecated}` : ""}</span>`
        }`,
      ),
    )}`,
)}
${extra.map((glob) => box(glob, html`${glob}`, "A pattern set for this endpoint."))}
</fieldset>`;
}

/** One endpoint: its settings, secret, test events, recover, and the controls that change it. */
export async function endpointPage(
  ctx: PageContext,
  id: string,
  revealed: string | null = null,
): Promise<Html> {
  const endpoint = await ctx.scope.endpoint(id);
  const base = `/endpoints/${seg(endpoint.id)}`;
  const types = ctx.scope.eventTypes();
  const testTypes = types.length > 0 ? types.map((t) => t.type) : null;
  const weekAgo = utcField(ctx.now - 7 * 86_400_000);
  const body = html`<dl class="fields">
<dt>URL</dt><dd class="mono">${endpoint.url}</dd>
<dt>Description</dt><dd>${endpoint.description ?? "—"}</dd>
<dt>State</dt><dd>${badge(endpoint.state)}${endpoint.state === "disabled" && endpoint.disabledReason ? html` <span class="muted">${endpoint.disabledReason}</span>` : ""}${endpoint.state === "circuit-open" ? html` <span class="muted">paused after failures; next try ${time(endpoint.circuitOpenUntil, ctx.now)}</span>` : ""}</dd>
<dt>Events</dt><dd class="mono">${endpoint.types.join(", ")}</dd>
<dt>Filter</dt><dd>${endpoint.filter ? html`<pre class="json">${JSON.stringify(endpoint.filter, null, 2)}</pre>` : "—"}</dd>
<dt>Added</dt><dd>${formatTime(endpoint.createdAt)}</dd>
</dl>
<p class="actions"><a href="${href(ctx, `${base}/edit`)}">Edit</a>
${
  endpoint.state === "disabled"
    ? postButton(ctx.csrfToken, href(ctx, `${base}/enable`), "Enable")
    : postButton(ctx.csrfToken, href(ctx, `${base}/disable`), "Disable")
}</p>

<h2 id="secret">Signing secret</h2>
<p>Verify every request with this secret (Standard Webhooks: the <span class="mono">webhook-signature</span> header).</p>
${
  revealed === null
    ? postButton(ctx.csrfToken, href(ctx, `${base}/reveal-secret`), "Reveal secret")
    : html`<p><code class="secret" aria-label="Signing secret">${revealed}</code></p>`
}
<form method="post" action="${href(ctx, `${base}/rotate-secret`)}" class="actions">${csrfField(ctx.csrfToken)}
<label for="overlap">Keep the old secret valid for</label>
<select id="overlap" name="overlap"><option value="0s">no time</option><option value="1h">1 hour</option><option value="24h" selected>24 hours</option><option value="7d">7 days</option></select>
<button type="submit">Rotate secret</button></form>

<h2>Send a test event</h2>
<form method="post" action="${href(ctx, `${base}/test`)}" class="actions">${csrfField(ctx.csrfToken)}
${
  testTypes === null
    ? html`<label for="test-type">Type</label><input id="test-type" name="type" type="text" required value="postel.test">`
    : html`<label for="test-type">Type</label><select id="test-type" name="type">${testTypes.map((t) => html`<option value="${t}">${t}</option>`)}</select>`
}
<button type="submit">Send test event</button></form>

<h2>Recover failed deliveries</h2>
<p>Send again every delivery to this endpoint that failed or gave up, for events since a time. You see how many first.</p>
<form method="post" action="${href(ctx, `${base}/recover`)}" class="actions">${csrfField(ctx.csrfToken)}
<label for="since">Since (UTC)</label><input id="since" name="since" type="datetime-local" required value="${weekAgo}">
<button type="submit">Count deliveries to recover</button></form>

<h2>Delete</h2>
<form method="post" action="${href(ctx, `${base}/delete`)}" class="actions">${csrfField(ctx.csrfToken)}
<label><input type="checkbox" name="confirm" value="1" required> Delete this endpoint: it receives nothing more.</label>
<button type="submit" class="danger">Delete endpoint</button></form>`;
  return layout(ctx, { title: endpoint.description || endpoint.url, body });
}

/** Step two of recover: the count, and the button that sends them. */
export async function recoverConfirmPage(
  ctx: PageContext,
  id: string,
  since: number,
  count: number,
): Promise<Html> {
  const endpoint = await ctx.scope.endpoint(id);
  const base = `/endpoints/${seg(endpoint.id)}`;
  const body =
    count === 0
      ? html`<p>No failed or dead-lettered delivery to <span class="mono">${endpoint.url}</span> since ${formatTime(since)}.</p>
<p><a href="${href(ctx, base)}">Back to the endpoint</a></p>`
      : html`<p><strong>${count}${count >= 1000 ? "+" : ""}</strong> ${count === 1 ? "delivery" : "deliveries"} to <span class="mono">${endpoint.url}</span> failed or gave up since ${formatTime(since)}.${count >= 1000 ? " One recover sends the first 1,000; run it again for the rest." : ""}</p>
<form method="post" action="${href(ctx, `${base}/recover`)}" class="actions">${csrfField(ctx.csrfToken)}
<input type="hidden" name="since" value="${new Date(since).toISOString()}"><input type="hidden" name="confirm" value="1">
<button type="submit" class="primary">Send ${count === 1 ? "it" : "them"} again</button> <a href="${href(ctx, base)}">Cancel</a></form>`;
  return layout(ctx, { title: "Recover deliveries", body });
}
