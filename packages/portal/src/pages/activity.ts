import { formatTime, type Html, html, nextPageLink } from "@postel/web-kit";
import { href, type PageContext, seg } from "./context.js";
import { layout } from "./layout.js";

/** What each audited action reads as, for the tenant. */
const ACTIONS: Record<string, string> = {
  "portal.sign-in": "signed in by link",
  "endpoint.create": "added an endpoint",
  "endpoint.update": "edited an endpoint",
  "endpoint.disable": "disabled an endpoint",
  "endpoint.enable": "enabled an endpoint",
  "endpoint.delete": "deleted an endpoint",
  "secret.reveal": "revealed a signing secret",
  "secret.rotate": "rotated a signing secret",
  "endpoint.test": "sent a test event",
  "delivery.replay": "sent a delivery again",
  "endpoint.recover": "recovered failed deliveries",
};

/** The tenant's own audit log: who did what in this portal, newest first. */
export async function activityPage(ctx: PageContext): Promise<Html> {
  const page = await ctx.scope.activity({ cursor: ctx.url.searchParams.get("cursor") || undefined });
  const rows = page.items.map((entry) => {
    const target =
      entry.target === null
        ? "—"
        : entry.target.startsWith("ep_") && entry.action !== "endpoint.delete"
          ? html`<a class="mono" href="${href(ctx, `/endpoints/${seg(entry.target)}`)}">${entry.target}</a>`
          : html`<span class="mono">${entry.target}</span>`;
    return html`<tr>
<td data-label="When">${formatTime(entry.at)}</td>
<td data-label="Who">${entry.actor}</td>
<td data-label="What">${Object.hasOwn(ACTIONS, entry.action) ? ACTIONS[entry.action] : entry.action}</td>
<td data-label="On">${target}</td>
</tr>`;
  });
  const body = html`<div class="table-wrap"><table>
<thead><tr><th>When</th><th>Who</th><th>What</th><th>On</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="4">Nothing done here yet.</td></tr>`}</tbody>
</table></div>${nextPageLink(ctx.url, page.nextCursor)}`;
  return layout(ctx, { title: "Activity", body });
}
