import { type Html, html } from "@postel/web-kit";
import type { PageContext } from "./context.js";

/** `2025-06-01 12:30:05Z`: UTC, to the second, the same on every operator's screen. */
export function formatTime(ms: number | null): string {
  if (ms === null) return "—";
  return new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** `3s ago`, `in 5m`: for what an operator reads at a glance. */
export function relative(ms: number | null, now: number): string {
  if (ms === null) return "—";
  const delta = Math.round((ms - now) / 1000);
  const size = Math.abs(delta);
  const text =
    size < 60
      ? `${size}s`
      : size < 3600
        ? `${Math.round(size / 60)}m`
        : size < 86_400
          ? `${Math.round(size / 3600)}h`
          : `${Math.round(size / 86_400)}d`;
  return delta <= 0 ? `${text} ago` : `in ${text}`;
}

/** A time with its relative form as a tooltip. */
export function time(ms: number | null, now: number): Html {
  return ms === null ? html`—` : html`<time title="${relative(ms, now)}">${formatTime(ms)}</time>`;
}

/** A status word in a coloured badge (the class is derived from a fixed list, never from input). */
export function badge(status: string): Html {
  const tone =
    {
      active: "ok",
      succeeded: "ok",
      dispatched: "ok",
      success: "ok",
      pending: "wait",
      held: "wait",
      retryable: "wait",
      "circuit-open": "warn",
      expired: "warn",
      cancelled: "muted",
      disabled: "bad",
      failed: "bad",
      permanent: "bad",
      "dead-lettered": "bad",
    }[status] ?? "muted";
  return html`<span class="badge ${tone}">${status}</span>`;
}

/** A percentage, or a dash when there is nothing to divide. */
export function percent(rate: number | null): string {
  return rate === null ? "—" : `${(rate * 100).toFixed(rate < 0.1 && rate > 0 ? 1 : 0)}%`;
}

/** JSON, indented, as escaped text in a `<pre>` (payloads and metadata are shown, never interpreted). */
export function jsonBlock(value: unknown): Html {
  return html`<pre class="json">${JSON.stringify(value, null, 2)}</pre>`;
}

/** The hidden CSRF field every form carries. */
export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;
}

/** A one-button POST form (enable, disable, replay, reveal). */
export function postButton(
  ctx: PageContext,
  action: string,
  label: string,
  extra: Html = html``,
  tone = "",
): Html {
  return html`<form method="post" action="${action}" class="inline">${csrfField(ctx)}${extra}<button type="submit" class="${tone}">${label}</button></form>`;
}

/** "Next page" with the keyset cursor, keeping the current filters. */
export function nextPageLink(ctx: PageContext, cursor: string | null): Html {
  if (cursor === null) return html``;
  const params = new URLSearchParams(ctx.url.search);
  params.set("cursor", cursor);
  params.delete("done");
  params.delete("n");
  return html`<p class="pager"><a href="${`${ctx.url.pathname}?${params}`}" rel="next">Older →</a></p>`;
}

/** The page size asked for with `?limit=` (1 to 200), else `fallback`. */
export function pageSize(params: URLSearchParams, fallback = 50): number {
  const asked = Number.parseInt(params.get("limit") ?? "", 10);
  return Number.isFinite(asked) && asked >= 1 ? Math.min(asked, 200) : fallback;
}
