import type { AttemptRecord, EndpointActivity } from "@postel/core";
import { expect, test } from "vitest";
import { Output } from "../output.js";
import { printActivity, printRecentAttempts, SNIPPET_CHARS } from "./endpoint-activity.js";

const NOW = Date.UTC(2025, 5, 1, 3, 0, 0);

function attempt(at: number, fields: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    id: `att_${at}`,
    deliveryId: "dlv_1",
    messageId: "msg_1",
    endpointId: "ep_1",
    webhookId: "wh_1",
    attemptNumber: 1,
    startedAt: at,
    latencyMs: 12,
    outcome: "retryable",
    statusCode: 503,
    errorCode: null,
    error: "HTTP 503",
    responseSnippet: "down for maintenance",
    ...fields,
  };
}

function activity(fields: Partial<EndpointActivity>): EndpointActivity {
  return {
    endpointId: "ep_1",
    at: NOW,
    state: "active",
    lastAttempt: null,
    lastFailure: null,
    lastSuccess: null,
    failingSince: null,
    nextProbeAt: null,
    waitingForTraffic: false,
    recent: [],
    lookbackMs: 86_400_000,
    ...fields,
  };
}

function printed(value: EndpointActivity): string {
  let text = "";
  const out = new Output({ write: (s: string) => (text += s) }, { write: () => {} }, {}, false);
  printActivity(out, value);
  printRecentAttempts(out, value);
  return text;
}

test("a failing endpoint: its last status, error and response, the last success and since when it fails", () => {
  const failure = attempt(NOW - 5_000, { attemptNumber: 2, messageId: "msg_2" });
  const success = attempt(NOW - 65_000, {
    outcome: "success",
    statusCode: 200,
    error: null,
    responseSnippet: "ok",
  });
  const text = printed(
    activity({
      state: "circuit-open",
      lastAttempt: failure,
      lastFailure: failure,
      lastSuccess: { at: success.startedAt, exact: true },
      failingSince: { at: NOW - 20_000, exact: false },
      nextProbeAt: NOW + 25_000,
      recent: [failure, success],
    }),
  );
  expect(text).toBe(
    [
      "",
      "Activity, last 24h",
      "last status    503 retryable, 12ms, 2025-06-01T02:59:55Z (5s ago)",
      "last error     HTTP 503, 2025-06-01T02:59:55Z (5s ago)",
      "last response  down for maintenance",
      "last success   2025-06-01T02:58:55Z (1m 5s ago)",
      "failing since  around 2025-06-01T02:59:40Z (to 10s, 20s ago)",
      "next probe     2025-06-01T03:00:25Z (in 25s)",
      "",
      "Recent attempts, newest first",
      "TIME                  #  OUTCOME    STATUS  LATENCY  MESSAGE  ERROR",
      "2025-06-01T02:59:55Z  2  retryable  503     12ms     msg_2    HTTP 503",
      "2025-06-01T02:58:55Z  1  success    200     12ms     msg_1",
      "",
    ].join("\n"),
  );
});

test("no success in the lookback, a network error, and a circuit waiting for traffic", () => {
  const refused = attempt(NOW - 3_600_000, {
    statusCode: null,
    errorCode: "CONNECTION_REFUSED",
    error: "connection refused",
    responseSnippet: null,
  });
  const text = printed(
    activity({
      state: "circuit-open",
      lastAttempt: refused,
      lastFailure: refused,
      failingSince: { at: NOW - 7_200_000, exact: false },
      waitingForTraffic: true,
      recent: [refused],
    }),
  );
  expect(text).toContain(
    "last status    CONNECTION_REFUSED retryable, 12ms, 2025-06-01T02:00:00Z (1h ago)\n",
  );
  expect(text).toContain("last response  none (no response)\n");
  expect(text).toContain("last success   none in the last 24h\n");
  expect(text).toContain(
    "failing since  at least since 2025-06-01T01:00:00Z (2h ago; no success in the last 24h)\n",
  );
  expect(text).toContain("next probe     waiting for traffic: the next delivery probes it\n");
});

test("a quiet endpoint, a healthy one and a disabled one say so", () => {
  expect(printed(activity({}))).toContain(
    [
      "last status    no attempt in the last 24h",
      "last error     none",
      "last response  none",
      "last success   none in the last 24h",
      "failing since  -",
      "next probe     none: the circuit is closed",
      "",
      "Recent attempts, newest first",
      "none in the last 24h",
    ].join("\n"),
  );
  const ok = attempt(NOW - 1_000, { outcome: "success", statusCode: 200, error: null, responseSnippet: "" });
  const healthy = printed(
    activity({
      state: "disabled",
      lastAttempt: ok,
      lastSuccess: { at: ok.startedAt, exact: true },
      recent: [ok],
    }),
  );
  expect(healthy).toContain("last response  (empty body)\n");
  expect(healthy).toContain("failing since  not failing: the last attempt succeeded\n");
  expect(healthy).toContain("next probe     none: the endpoint is disabled, its deliveries are held\n");
});

test("the receiver's response is cut to SNIPPET_CHARS and printed with its controls visible", () => {
  const body = `\x1b]0;pwned\x07\rall good\u202e${"x".repeat(300)}`;
  const last = attempt(NOW - 1_000, { responseSnippet: body });
  const text = printed(activity({ lastAttempt: last, lastFailure: last, recent: [last] }));
  const line = text.split("\n").find((l) => l.startsWith("last response"))!;
  // 20 characters before the x's, each control among them printed as an escape.
  expect(line).toBe(
    `last response  \\x1b]0;pwned\\x07\\rall good\\u202e${"x".repeat(SNIPPET_CHARS - 20)}… (120 more characters: postel messages show msg_1)`,
  );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
});
