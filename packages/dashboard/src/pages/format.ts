import * as kit from "@postel/web-kit";
import type { Html } from "@postel/web-kit";
import type { PageContext } from "./context.js";

export { badge, formatTime, jsonBlock, pageSize, parseUtc, time, utcField } from "@postel/web-kit";

/** A percentage, or a dash when there is nothing to divide. */
export function percent(rate: number | null): string {
  return rate === null ? "—" : `${(rate * 100).toFixed(rate < 0.1 && rate > 0 ? 1 : 0)}%`;
}

/** The hidden CSRF field every form carries. */
export const csrfField = (ctx: PageContext): Html => kit.csrfField(ctx.csrfToken);

/** A one-button POST form (enable, disable, replay, reveal). */
export const postButton = (
  ctx: PageContext,
  action: string,
  label: string,
  extra?: Html,
  tone?: string,
): Html => kit.postButton(ctx.csrfToken, action, label, extra, tone);

/** "Next page" with the keyset cursor, keeping the current filters. */
export const nextPageLink = (ctx: PageContext, cursor: string | null): Html =>
  kit.nextPageLink(ctx.url, cursor);
