import * as kit from "@postel/web-kit";
import { type Html, html } from "@postel/web-kit";
import type { PageContext } from "./context.js";

export { badge, formatTime, jsonBlock, pageSize, parseUtc, relative, time, utcField } from "@postel/web-kit";

/** A percentage, or a dash when there is nothing to divide. */
export function percent(rate: number | null): string {
  return rate === null ? "—" : `${(rate * 100).toFixed(rate < 0.1 && rate > 0 ? 1 : 0)}%`;
}

/**
 * Text a receiver controls (an error, a response snippet) with its control characters shown as
 * their Unicode pictures (`ESC` as `␛`): the template escapes markup, and this keeps a terminal
 * sequence such as `\u001b]0;title\u0007` visible as text instead of vanishing from the page (or
 * acting on the terminal it is copied into). Tabs and line breaks stay.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, (c) =>
    String.fromCharCode(c === "\u007f" ? 0x2421 : 0x2400 + c.charCodeAt(0)),
  );
}

/** A response snippet as text in a `<pre>`, or a dash. */
export const snippet = (text: string | null): Html | string =>
  text ? html`<pre class="snippet">${printable(text)}</pre>` : "—";

/** A count that stopped at `cap` (stats' `countCap`) reads as "1000+". */
export const atLeast = (n: number, cap: number | null): string =>
  cap !== null && n >= cap ? `${n}+` : String(n);

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
