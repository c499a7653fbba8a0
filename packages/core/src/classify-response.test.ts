import { describe, expect, test } from "vitest";
import { ExponentialBackoff, LinearBackoff } from "./backoff.js";
import {
  type Classification,
  classifyOutcome,
  type HttpErrorCode,
  type HttpOutcome,
  nextRetryDelay,
} from "./classify-response.js";
import type { Random } from "./random.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

function response(status: number, headers: Record<string, string> = {}): HttpOutcome {
  return { kind: "response", status, headers, bodySnippet: "", latencyMs: 20 };
}

function failure(code: HttpErrorCode): HttpOutcome {
  return { kind: "error", code, message: `${code} from the transport`, latencyMs: 20 };
}

describe("classifyOutcome: responses", () => {
  test.each<[number, Classification]>([
    [200, { result: "success" }],
    [201, { result: "success" }],
    [204, { result: "success" }],
    [299, { result: "success" }],
    [100, { result: "retryable", reason: "HTTP 100 (unexpected status)" }],
    [301, { result: "retryable", reason: "HTTP 301 (redirects are not followed)" }],
    [302, { result: "retryable", reason: "HTTP 302 (redirects are not followed)" }],
    [308, { result: "retryable", reason: "HTTP 308 (redirects are not followed)" }],
    [400, { result: "permanent", reason: "HTTP 400" }],
    [401, { result: "permanent", reason: "HTTP 401" }],
    [403, { result: "permanent", reason: "HTTP 403" }],
    [404, { result: "permanent", reason: "HTTP 404" }],
    [408, { result: "retryable", reason: "HTTP 408" }],
    [409, { result: "permanent", reason: "HTTP 409" }],
    [410, { result: "permanent", reason: "HTTP 410" }],
    [422, { result: "permanent", reason: "HTTP 422" }],
    [429, { result: "retryable", reason: "HTTP 429" }],
    [499, { result: "permanent", reason: "HTTP 499" }],
    [500, { result: "retryable", reason: "HTTP 500" }],
    [502, { result: "retryable", reason: "HTTP 502" }],
    [503, { result: "retryable", reason: "HTTP 503" }],
    [504, { result: "retryable", reason: "HTTP 504" }],
    [599, { result: "retryable", reason: "HTTP 599" }],
    [600, { result: "retryable", reason: "HTTP 600 (unexpected status)" }],
    [0, { result: "retryable", reason: "HTTP 0 (unexpected status)" }],
  ])("HTTP %i without Retry-After → %j", (status, expected) => {
    expect(classifyOutcome(response(status), NOW)).toEqual(expected);
  });

  test.each<[number, string, Classification]>([
    [429, "120", { result: "retryable", reason: "HTTP 429 (Retry-After 2m)", retryAfterMs: 120_000 }],
    [408, "5", { result: "retryable", reason: "HTTP 408 (Retry-After 5s)", retryAfterMs: 5_000 }],
    [503, "3600", { result: "retryable", reason: "HTTP 503 (Retry-After 1h)", retryAfterMs: 3_600_000 }],
    [
      429,
      "Thu, 01 Jan 2026 12:01:30 GMT",
      { result: "retryable", reason: "HTTP 429 (Retry-After 1m 30s)", retryAfterMs: 90_000 },
    ],
    [
      503,
      "Wed, 31 Dec 2025 12:00:00 GMT",
      { result: "retryable", reason: "HTTP 503 (Retry-After 0ms)", retryAfterMs: 0 },
    ],
    [429, "later", { result: "retryable", reason: "HTTP 429" }],
    [429, "1.5", { result: "retryable", reason: "HTTP 429" }],
    [500, "120", { result: "retryable", reason: "HTTP 500" }],
    [502, "120", { result: "retryable", reason: "HTTP 502" }],
    [400, "120", { result: "permanent", reason: "HTTP 400" }],
    [301, "120", { result: "retryable", reason: "HTTP 301 (redirects are not followed)" }],
  ])("HTTP %i with Retry-After %j → %j", (status, retryAfter, expected) => {
    expect(classifyOutcome(response(status, { "retry-after": retryAfter }), NOW)).toEqual(expected);
  });
});

describe("classifyOutcome: network failures", () => {
  test.each<[HttpErrorCode, Classification]>([
    ["TIMEOUT", { result: "retryable", reason: "timeout" }],
    ["CONNECT_TIMEOUT", { result: "retryable", reason: "connect timeout" }],
    ["CONNECTION_REFUSED", { result: "retryable", reason: "connection refused" }],
    ["CONNECTION_RESET", { result: "retryable", reason: "connection reset" }],
    ["DNS_FAILURE", { result: "retryable", reason: "DNS failure" }],
    ["TLS_ERROR", { result: "retryable", reason: "TLS error" }],
    ["RESPONSE_TOO_LARGE", { result: "retryable", reason: "response too large" }],
    ["NETWORK_ERROR", { result: "retryable", reason: "network error" }],
    [
      "PRIVATE_ADDRESS",
      { result: "permanent", reason: "destination is a private address, forbidden by the network policy" },
    ],
  ])("%s → %j", (code, expected) => {
    expect(classifyOutcome(failure(code), NOW)).toEqual(expected);
  });
});

describe("nextRetryDelay", () => {
  const lowest: Random = () => 0; // -20% with the default jitter
  const highest: Random = () => 0.999_999_999; // +20%
  const HOUR = 3_600_000;

  test.each([
    ["no Retry-After: the jittered schedule", {}, lowest, HOUR, 4_000],
    ["a shorter Retry-After loses to the schedule", { retryAfterMs: 1_000 }, lowest, HOUR, 4_000],
    ["a longer Retry-After wins", { retryAfterMs: 60_000 }, lowest, HOUR, 60_000],
    ["jitter never shortens a Retry-After", { retryAfterMs: 5_000 }, lowest, HOUR, 5_000],
    ["jitter may still lengthen past a Retry-After", { retryAfterMs: 5_000 }, highest, HOUR, 6_000],
    ["Retry-After is capped", { retryAfterMs: 10 * HOUR }, lowest, HOUR, HOUR],
    ["a Retry-After of 0 changes nothing", { retryAfterMs: 0 }, lowest, HOUR, 4_000],
  ])("%s", (_label, classification, random, cap, expected) => {
    expect(nextRetryDelay(ExponentialBackoff(), 1, classification, random, cap)).toBe(expected);
  });

  test("the cap does not shorten a scheduled delay longer than it", () => {
    const policy = ExponentialBackoff({ jitter: 0 });
    expect(nextRetryDelay(policy, 9, { retryAfterMs: 10 * HOUR }, lowest, HOUR)).toBe(3 * 24 * HOUR);
  });

  test("null when no retries are left, even with a Retry-After", () => {
    const policy = LinearBackoff({ maxAttempts: 2, step: "10s" });
    expect(nextRetryDelay(policy, 2, { retryAfterMs: 1_000 }, lowest, HOUR)).toBe(20_000);
    expect(nextRetryDelay(policy, 3, { retryAfterMs: 1_000 }, lowest, HOUR)).toBeNull();
  });

  test("maxAttempts 0 never retries, whatever the server says", () => {
    const policy = ExponentialBackoff({ maxAttempts: 0 });
    expect(nextRetryDelay(policy, 1, { retryAfterMs: 1_000 }, lowest, HOUR)).toBeNull();
  });

  test("takes retryAfterMs straight from a classification", () => {
    const classification = classifyOutcome(response(429, { "retry-after": "600" }), NOW);
    if (classification.result !== "retryable") throw new Error("expected a retryable classification");
    expect(nextRetryDelay(ExponentialBackoff(), 1, classification, lowest, HOUR)).toBe(600_000);
  });
});
