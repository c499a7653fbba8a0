import type { RetryPolicy } from "./backoff.js";
import { formatDuration } from "./duration.js";
import type { Random } from "./random.js";
import { parseRetryAfter } from "./retry-after.js";

/** Why an HTTP request produced no response. */
export type HttpErrorCode =
  | "TIMEOUT"
  | "CONNECT_TIMEOUT"
  | "CONNECTION_REFUSED"
  | "CONNECTION_RESET"
  | "DNS_FAILURE"
  | "TLS_ERROR"
  | "PRIVATE_ADDRESS"
  | "RESPONSE_TOO_LARGE"
  | "NETWORK_ERROR";

/** What one delivery attempt produced: a response (headers lower-cased) or a network failure as a value. */
export type HttpOutcome =
  | {
      kind: "response";
      status: number;
      headers: Record<string, string>;
      bodySnippet: string;
      latencyMs: number;
    }
  | { kind: "error"; code: HttpErrorCode; message: string; latencyMs: number };

/** The verdict on an outcome: done, try again (maybe no sooner than `retryAfterMs`), or give up. */
export type Classification =
  | { result: "success" }
  | { result: "retryable"; reason: string; retryAfterMs?: number }
  | { result: "permanent"; reason: string };

const ERROR_REASONS: Record<HttpErrorCode, string> = {
  TIMEOUT: "timeout",
  CONNECT_TIMEOUT: "connect timeout",
  CONNECTION_REFUSED: "connection refused",
  CONNECTION_RESET: "connection reset",
  DNS_FAILURE: "DNS failure",
  TLS_ERROR: "TLS error",
  PRIVATE_ADDRESS: "destination is a private address, forbidden by the network policy",
  RESPONSE_TOO_LARGE: "response too large",
  NETWORK_ERROR: "network error",
};

// The statuses whose Retry-After we honour: the server is telling us when it can take the request.
const RETRY_AFTER_STATUSES = new Set([408, 429, 503]);

/**
 * Decides success, retry or permanent failure for one attempt. `now` (epoch ms) resolves a
 * `Retry-After` given as an HTTP-date.
 * @example
 * classifyOutcome({ kind: "response", status: 429, headers: { "retry-after": "120" }, bodySnippet: "", latencyMs: 12 }, now);
 * // { result: "retryable", reason: "HTTP 429 (Retry-After 2m)", retryAfterMs: 120000 }
 */
export function classifyOutcome(outcome: HttpOutcome, now: number): Classification {
  if (outcome.kind === "error") {
    const reason = ERROR_REASONS[outcome.code] ?? "network error";
    // Retrying a forbidden destination cannot succeed: the policy, not the network, said no.
    return outcome.code === "PRIVATE_ADDRESS"
      ? { result: "permanent", reason }
      : { result: "retryable", reason };
  }
  const { status } = outcome;
  const label = `HTTP ${status}`;
  if (status >= 200 && status <= 299) return { result: "success" };
  if (RETRY_AFTER_STATUSES.has(status)) {
    const retryAfterMs = parseRetryAfter(outcome.headers["retry-after"], now);
    return retryAfterMs === undefined
      ? { result: "retryable", reason: label }
      : {
          result: "retryable",
          reason: `${label} (Retry-After ${formatDuration(retryAfterMs)})`,
          retryAfterMs,
        };
  }
  if (status >= 500 && status <= 599) return { result: "retryable", reason: label };
  if (status >= 400 && status <= 499) return { result: "permanent", reason: label };
  if (status >= 300 && status <= 399) {
    return { result: "retryable", reason: `${label} (redirects are not followed)` };
  }
  // 1xx and codes outside 100-599 say nothing about the request itself; treat them as transient.
  return { result: "retryable", reason: `${label} (unexpected status)` };
}

/**
 * Milliseconds to wait before retry `retry` (1-based), or `null` when the policy has none left.
 * A `Retry-After` (capped at `maxRetryAfterMs`) wins when it is longer than the jittered scheduled
 * delay, so jitter never shortens what the server asked for.
 * @example
 * nextRetryDelay(ExponentialBackoff(), 1, { retryAfterMs: 60_000 }, random, 3_600_000); // 60000
 */
export function nextRetryDelay(
  policy: RetryPolicy,
  retry: number,
  classification: { retryAfterMs?: number },
  random: Random,
  maxRetryAfterMs: number,
): number | null {
  const scheduled = policy.delayBeforeRetry(retry, random);
  if (scheduled === null) return null;
  const { retryAfterMs } = classification;
  if (retryAfterMs === undefined) return scheduled;
  return Math.max(scheduled, Math.min(retryAfterMs, maxRetryAfterMs));
}
