import { describe, expect, test } from "vitest";
import type { AttemptRecord } from "../storage/records.js";
import { feedStart, successAndFailure } from "./endpoint-activity.js";

const attempt = (startedAt: number, outcome: AttemptRecord["outcome"]): AttemptRecord => ({
  id: `att_${startedAt}`,
  deliveryId: "dlv_1",
  messageId: "msg_1",
  endpointId: "ep_1",
  webhookId: "msg_1",
  attemptNumber: 1,
  startedAt,
  latencyMs: 5,
  outcome,
  statusCode: outcome === "success" ? 200 : 503,
  errorCode: null,
  error: outcome === "success" ? null : "HTTP 503",
  responseSnippet: null,
});
const bucket = (start: number, attempts: number, failures: number) => ({ start, attempts, failures });

describe("successAndFailure", () => {
  test.each([
    {
      case: "the newest succeeded: not failing",
      recent: [attempt(300, "success"), attempt(200, "retryable")],
      buckets: [bucket(0, 2, 1)],
      expected: { lastSuccess: { at: 300, exact: true }, failingSince: null },
    },
    {
      case: "failures after a success among the recent: both exact, from the oldest failure after it",
      recent: [attempt(500, "retryable"), attempt(400, "permanent"), attempt(300, "success")],
      buckets: [bucket(0, 3, 2)],
      expected: { lastSuccess: { at: 300, exact: true }, failingSince: { at: 400, exact: true } },
    },
    {
      case: "only failures among the recent: the success's bucket, and the bucket after it",
      recent: [attempt(95_000, "retryable")],
      buckets: [bucket(10_000, 5, 0), bucket(20_000, 3, 1), bucket(40_000, 4, 4), bucket(90_000, 1, 1)],
      expected: { lastSuccess: { at: 20_000, exact: false }, failingSince: { at: 40_000, exact: false } },
    },
    {
      case: "the failures began in the success's own bucket",
      recent: [attempt(25_000, "retryable")],
      buckets: [bucket(20_000, 3, 2)],
      expected: { lastSuccess: { at: 20_000, exact: false }, failingSince: { at: 20_000, exact: false } },
    },
    {
      case: "no success in the lookback: failing since at least its oldest bucket",
      recent: [attempt(95_000, "retryable")],
      buckets: [bucket(30_000, 2, 2), bucket(90_000, 1, 1)],
      expected: { lastSuccess: null, failingSince: { at: 30_000, exact: false } },
    },
    {
      case: "no attempt at all",
      recent: [],
      buckets: [],
      expected: { lastSuccess: null, failingSince: null },
    },
  ])("$case", ({ recent, buckets, expected }) => {
    expect(successAndFailure(recent, buckets)).toEqual(expected);
  });
});

describe("feedStart", () => {
  test("a quiet endpoint starts in the bucket that holds its oldest wanted attempt, or its oldest bucket", () => {
    const buckets = [bucket(0, 10, 0), bucket(50_000, 5, 0), bucket(90_000, 5, 0)];
    // 2 of bucket 0's 10 attempts are wanted: twice their share, counted back from its end.
    expect(feedStart(buckets, 12, 100_000)).toEqual({ bucket: 0, estimate: 6_000 });
    expect(feedStart(buckets, 10, 100_000)).toEqual({ bucket: 50_000, estimate: 50_000 });
    expect(feedStart(buckets, 100, 100_000)).toEqual({ bucket: 0, estimate: 0 });
  });

  test("a busy bucket is read from the share of it at its end, up to now for the one still filling", () => {
    expect(feedStart([bucket(0, 1_000, 0)], 20, 50_000)).toEqual({ bucket: 0, estimate: 9_600 });
    expect(feedStart([bucket(0, 1_000, 0)], 20, 5_000)).toEqual({ bucket: 0, estimate: 4_800 });
  });
});
