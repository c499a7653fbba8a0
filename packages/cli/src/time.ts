import { formatDuration } from "@postel/signing/inbound";

/** `2025-06-01T12:00:03Z`: ISO-8601 to the second, for tables. */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** `3m 20s ago` / `in 5s`. */
export function relative(ms: number | null | undefined, now: number): string {
  if (ms === null || ms === undefined) return "";
  return ms <= now ? `${formatDuration(now - ms)} ago` : `in ${formatDuration(ms - now)}`;
}

/** `12.5%`, or empty when there were no attempts. */
export function percent(rate: number | null): string {
  return rate === null ? "" : `${(rate * 100).toFixed(1)}%`;
}

export { formatDuration };
