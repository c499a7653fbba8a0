import { type Endpoint, type HeldKey, isPostelError, type Page } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import { canOperate, href, type PageContext } from "./context.js";
import { badge, nextPageLink, pageSize, postButton, printable, time } from "./format.js";
import { layout } from "./layout.js";

/**
 * Ordering keys held on endpoints whose `onKeyFailure` is `hold`: each with its head (the delivery
 * that dead-lettered or failed for good), why, and how many wait behind it; an admin replays the
 * head (it goes first, then the rest, in order) or skips it (the rest go, the head stays).
 */
export async function heldKeysPage(ctx: PageContext): Promise<Html> {
  const params = ctx.url.searchParams;
  const endpointId = params.get("endpoint")?.trim() || undefined;
  let page: Page<HeldKey>;
  try {
    page = await ctx.ops.orderingKeys.held({
      endpointId,
      cursor: params.get("cursor") || undefined,
      limit: pageSize(params),
    });
  } catch (error) {
    if (!isPostelError(error) || error.code !== "ORDERING_UNSUPPORTED") throw error;
    return layout(ctx, { title: "Held keys", body: html`<p class="notice warn">${error.message}</p>` });
  }
  const shown = [...new Set(page.items.map((k) => k.endpointId))];
  const endpoints = new Map<string, Endpoint | null>(
    await Promise.all(shown.map(async (id) => [id, await ctx.ops.endpoints.get(id)] as const)),
  );
  const operate = canOperate(ctx);
  const rows = page.items.map(
    (k) => html`<tr>
<td data-label="Endpoint"><a class="mono" href="${href(ctx, `/endpoints/${encodeURIComponent(k.endpointId)}`)}">${endpoints.get(k.endpointId)?.url ?? k.endpointId}</a></td>
<td data-label="Key" class="mono">${printable(k.orderingKey)}</td>
<td data-label="Head"><a class="mono id" href="${href(ctx, `/messages/${encodeURIComponent(k.messageId)}`)}">${k.messageId}</a><div class="muted mono">${k.deliveryId}</div> ${badge(k.status)}</td>
<td data-label="Last error">${k.lastError === null ? "—" : printable(k.lastError)}</td>
<td data-label="Waiting">${k.waiting}</td>
<td data-label="Held since">${time(k.heldAt, ctx.now)}</td>
${operate ? html`<td data-label="Release" class="actions">${releaseButtons(ctx, k)}</td>` : ""}
</tr>`,
  );
  const columns = operate ? 7 : 6;
  const body = html`<p class="muted">Messages sent with an <span class="mono">orderingKey</span> go to each endpoint one at a time. On an endpoint whose <span class="mono">onKeyFailure</span> is <span class="mono">hold</span>, a key whose head dead-letters or fails for good waits here: replay the head to deliver it first, then the rest in order; or skip it to let the rest go without it.</p>
<form method="get" class="filters" action="${href(ctx, "/held-keys")}">
<label>Endpoint id <input name="endpoint" value="${endpointId ?? ""}" placeholder="any (ep_…)" autocomplete="off"></label>
<button type="submit">Filter</button>
</form>
<div class="table-wrap"><table id="held-keys">
<thead><tr><th>Endpoint</th><th>Key</th><th>Head</th><th>Last error</th><th>Waiting</th><th>Held since</th>${operate ? html`<th></th>` : ""}</tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="${columns}">No held keys${endpointId ? " on this endpoint" : ""}.</td></tr>`}</tbody>
</table></div>
${nextPageLink(ctx, page.nextCursor)}
${operate ? html`<p class="muted">Skipping asks first. Replaying the head re-sends that one delivery; the key's waiting messages follow it.</p>` : ""}`;
  return layout(ctx, { title: "Held keys", body });
}

// Replay is the message page's replay of one delivery (message × endpoint); skip asks first.
function releaseButtons(ctx: PageContext, k: HeldKey): Html {
  const endpoint = html`<input type="hidden" name="endpoint" value="${k.endpointId}">`;
  return html`${postButton(ctx, href(ctx, `/messages/${encodeURIComponent(k.messageId)}/replay`), "Replay head", endpoint)}
${postButton(ctx, href(ctx, "/held-keys/skip"), "Skip…", html`${endpoint}<input type="hidden" name="key" value="${k.orderingKey}">`, "danger")}`;
}
