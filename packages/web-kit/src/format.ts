/**
 * Formatting shared by Postel's pages: times in UTC to the second (the same on every screen),
 * status badges, JSON shown as text, and the `datetime-local` fields read as UTC.
 */
import { type Html, html } from "./html.js";

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

/** JSON, indented, as escaped text in a `<pre>` (payloads and metadata are shown, never interpreted). */
export function jsonBlock(value: unknown): Html {
  return html`<pre class="json">${JSON.stringify(value, null, 2)}</pre>`;
}

/** `2025-06-01T12:30` from a `datetime-local` field, read as UTC (what the page shows); undefined when empty or invalid. */
export function parseUtc(value: string | null): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(/Z$|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The `datetime-local` value of a time, in UTC. */
export function utcField(ms: number | undefined): string {
  return ms === undefined ? "" : new Date(ms).toISOString().slice(0, 16);
}

/** The page size asked for with `?limit=` (1 to 200), else `fallback`. */
export function pageSize(params: URLSearchParams, fallback = 50): number {
  const asked = Number.parseInt(params.get("limit") ?? "", 10);
  return Number.isFinite(asked) && asked >= 1 ? Math.min(asked, 200) : fallback;
}

/** The hidden CSRF field every form carries (`token` from `Csrf.issue`). */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** A one-button POST form (enable, disable, replay, reveal). */
export function postButton(
  token: string,
  action: string,
  label: string,
  extra: Html = html``,
  tone = "",
): Html {
  return html`<form method="post" action="${action}" class="inline">${csrfField(token)}${extra}<button type="submit" class="${tone}">${label}</button></form>`;
}

/** "Older →" with the keyset cursor, keeping the page's other query parameters. */
export function nextPageLink(url: URL, cursor: string | null): Html {
  if (cursor === null) return html``;
  const params = new URLSearchParams(url.search);
  params.set("cursor", cursor);
  params.delete("done");
  params.delete("n");
  return html`<p class="pager"><a href="${`${url.pathname}?${params}`}" rel="next">Older →</a></p>`;
}

/** A link below a surface's mount path: `linkTo("/postel", "/messages", { cursor })`; empty parameters are left out. */
export function linkTo(base: string, path: string, params: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
  const search = query.toString();
  return `${base}${path}${search ? `?${search}` : ""}`;
}
