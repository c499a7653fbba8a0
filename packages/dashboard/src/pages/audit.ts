import { isPostelError } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import { href, type PageContext } from "./context.js";
import { formatTime, nextPageLink, pageSize, parseUtc, utcField } from "./format.js";
import { layout } from "./layout.js";

/**
 * The audit log (`outbound.auditLog`): who did what to what and when, newest first, from every
 * source (the customer portal's tenants, the app's own calls), filtered by tenant, action and time.
 */
export async function auditPage(ctx: PageContext): Promise<Html> {
  const params = ctx.url.searchParams;
  const filter = {
    tenantId: params.get("tenant")?.trim() || undefined,
    action: params.get("action")?.trim() || undefined,
    since: parseUtc(params.get("since")),
    until: parseUtc(params.get("until")),
  };
  let page: Awaited<ReturnType<PageContext["ops"]["auditLog"]["list"]>>;
  try {
    page = await ctx.ops.auditLog.list({
      ...filter,
      cursor: params.get("cursor") || undefined,
      limit: pageSize(params),
    });
  } catch (error) {
    if (!isPostelError(error) || error.code !== "AUDIT_LOG_UNSUPPORTED") throw error;
    return layout(ctx, { title: "Audit log", body: html`<p class="notice warn">${error.message}</p>` });
  }
  const rows = page.items.map(
    (entry) => html`<tr>
<td data-label="When">${formatTime(entry.at)}</td>
<td data-label="Tenant">${entry.tenantId ?? "—"}</td>
<td data-label="Actor">${entry.actor}</td>
<td data-label="Action" class="mono">${entry.action}</td>
<td data-label="Target">${entry.target === null ? "—" : html`<span class="mono id">${entry.target}</span>`}</td>
<td data-label="Source">${entry.source}</td>
<td data-label="Detail">${
      entry.detail === null
        ? "—"
        : html`<span class="mono">${Object.entries(entry.detail)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(" ")}</span>`
    }</td>
</tr>`,
  );
  const body = html`<form method="get" class="filters" action="${href(ctx, "/audit")}">
<label>Tenant <input name="tenant" value="${filter.tenantId ?? ""}"></label>
<label>Action <input name="action" value="${filter.action ?? ""}" placeholder="endpoint.create"></label>
<label>From (UTC) <input type="datetime-local" name="since" value="${utcField(filter.since)}"></label>
<label>To (UTC) <input type="datetime-local" name="until" value="${utcField(filter.until)}"></label>
<button type="submit">Filter</button>
</form>
<div class="table-wrap"><table>
<thead><tr><th>When</th><th>Tenant</th><th>Actor</th><th>Action</th><th>Target</th><th>Source</th><th>Detail</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="7">No entries match.</td></tr>`}</tbody>
</table></div>${nextPageLink(ctx, page.nextCursor)}`;
  return layout(ctx, { title: "Audit log", body });
}
