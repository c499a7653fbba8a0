import { describe, expect, test, vi } from "vitest";
import {
  Custom,
  DEFAULT_SCHEDULE,
  ExponentialBackoff,
  isRetryPolicy,
  LinearBackoff,
  type RetryPolicy,
} from "./backoff.js";
import type { Duration } from "./duration.js";
import { type Random, seededRandom } from "./random.js";

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const middle: Random = () => 0.5; // jitter factor exactly 1
const lowest: Random = () => 0;
const highest: Random = () => 0.999_999_999;

function delays(policy: RetryPolicy, upTo: number, random: Random = middle): (number | null)[] {
  return Array.from({ length: upTo }, (_, i) => policy.delayBeforeRetry(i + 1, random));
}

describe("ExponentialBackoff", () => {
  test("the default schedule is 5s 5m 30m 2h 5h 10h 1d 2d 3d", () => {
    expect(DEFAULT_SCHEDULE).toEqual([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 1 * D, 2 * D, 3 * D]);
  });

  test("by default retry k waits schedule[k-1], 9 retries, then no more", () => {
    const policy = ExponentialBackoff();
    expect(policy.kind).toBe("exponential");
    expect(policy.maxAttempts).toBe(9);
    expect(delays(policy, 10)).toEqual([...DEFAULT_SCHEDULE, null]);
  });

  test("maxAttempts beyond the schedule reuses the last delay", () => {
    const policy = ExponentialBackoff({ schedule: ["10s", "1m"], maxAttempts: 4, jitter: 0 });
    expect(delays(policy, 5)).toEqual([10 * S, M, M, M, null]);
  });

  test("maxAttempts defaults to the length of a custom schedule", () => {
    const policy = ExponentialBackoff({ schedule: ["10s", "1m", "10m", "1h"] });
    expect(policy.maxAttempts).toBe(4);
    expect(delays(policy, 5)).toEqual([10 * S, M, 10 * M, H, null]);
  });

  test("maxAttempts shorter than the schedule stops early", () => {
    expect(delays(ExponentialBackoff({ maxAttempts: 2 }), 3)).toEqual([5 * S, 5 * M, null]);
  });

  test("maxAttempts 0 means no retries at all", () => {
    expect(ExponentialBackoff({ maxAttempts: 0 }).delayBeforeRetry(1, middle)).toBeNull();
  });

  test("schedule entries may be milliseconds", () => {
    expect(delays(ExponentialBackoff({ schedule: [100, 250], jitter: 0 }), 2)).toEqual([100, 250]);
  });

  test.each([
    ["lowest random", lowest, 4 * S],
    ["highest random", highest, 6 * S],
    ["middle random", middle, 5 * S],
  ])("default jitter is ± 20%%: %s gives %i ms for a 5s delay", (_label, random, expected) => {
    expect(ExponentialBackoff().delayBeforeRetry(1, random)).toBe(expected);
  });

  test("with a seeded random every jittered delay stays within ± 20% and they are not all equal", () => {
    const policy = ExponentialBackoff();
    const random = seededRandom(7);
    const samples = Array.from({ length: 200 }, () => policy.delayBeforeRetry(3, random)!);
    for (const ms of samples) {
      expect(ms).toBeGreaterThanOrEqual(24 * M);
      expect(ms).toBeLessThanOrEqual(36 * M);
      expect(Number.isInteger(ms)).toBe(true);
    }
    expect(new Set(samples).size).toBeGreaterThan(100);
  });

  test("jitter 1 can shorten a delay to zero but never below", () => {
    expect(ExponentialBackoff({ jitter: 1 }).delayBeforeRetry(1, lowest)).toBe(0);
    expect(ExponentialBackoff({ jitter: 1 }).delayBeforeRetry(1, highest)).toBe(10 * S);
  });

  test("jitter 0 ignores the random source", () => {
    const random = vi.fn(() => 0);
    expect(ExponentialBackoff({ jitter: 0 }).delayBeforeRetry(1, random)).toBe(5 * S);
    expect(random).not.toHaveBeenCalled();
  });
});

describe("LinearBackoff", () => {
  test("waits k × step before retry k, then no more", () => {
    const policy = LinearBackoff({ maxAttempts: 5, step: "30s" });
    expect(policy.kind).toBe("linear");
    expect(delays(policy, 6, lowest)).toEqual([30 * S, 60 * S, 90 * S, 120 * S, 150 * S, null]);
  });

  test("applies jitter when asked", () => {
    const policy = LinearBackoff({ maxAttempts: 2, step: 1_000, jitter: 0.5 });
    expect(delays(policy, 2, lowest)).toEqual([500, 1_000]);
  });
});

describe("Custom", () => {
  test("compute receives the number of failed attempts so far: k before retry k", () => {
    const compute = vi.fn((failed: number): Duration => `${failed}s`);
    const policy = Custom({ maxAttempts: 3, compute });
    expect(policy.kind).toBe("custom");
    expect(delays(policy, 4)).toEqual([1 * S, 2 * S, 3 * S, null]);
    expect(compute.mock.calls).toEqual([[1], [2], [3]]);
  });

  test("the seed's example: min(3600, n² × 5) seconds", () => {
    const policy = Custom({ maxAttempts: 6, compute: (n) => `${Math.min(3600, n ** 2 * 5)}s` });
    expect(delays(policy, 7)).toEqual([5 * S, 20 * S, 45 * S, 80 * S, 125 * S, 180 * S, null]);
  });

  test("compute may return milliseconds", () => {
    expect(Custom({ maxAttempts: 1, compute: () => 1234 }).delayBeforeRetry(1, middle)).toBe(1234);
  });

  test("an invalid duration from compute throws INVALID_DURATION naming compute", () => {
    const policy = Custom({ maxAttempts: 2, compute: () => "soon" as Duration });
    expect(() => policy.delayBeforeRetry(2, middle)).toThrow(
      expect.objectContaining({ code: "INVALID_DURATION", message: expect.stringContaining("compute(2)") }),
    );
  });

  test("compute is not called once retries are exhausted", () => {
    const compute = vi.fn(() => 1);
    expect(Custom({ maxAttempts: 0, compute }).delayBeforeRetry(1, middle)).toBeNull();
    expect(compute).not.toHaveBeenCalled();
  });
});

describe("validation at construction", () => {
  const build: Record<string, (options: Record<string, unknown>) => RetryPolicy> = {
    exponential: (o) => ExponentialBackoff(o as never),
    linear: (o) => LinearBackoff({ maxAttempts: 3, step: "1s", ...o } as never),
    custom: (o) => Custom({ maxAttempts: 3, compute: () => 1, ...o } as never),
  };

  test.each([
    ["exponential", { maxAttempts: -1 }, /maxAttempts must be a non-negative integer/],
    ["exponential", { maxAttempts: 1.5 }, /maxAttempts/],
    ["exponential", { maxAttempts: "3" }, /maxAttempts/],
    ["exponential", { schedule: [] }, /schedule must be a non-empty array/],
    ["exponential", { schedule: "5s" }, /schedule must be a non-empty array/],
    ["exponential", { schedule: ["5s", "later"] }, /schedule\[1\] must be a duration .*"later"/],
    ["exponential", { jitter: 1.5 }, /jitter must be a fraction between 0 and 1/],
    ["exponential", { jitter: -0.1 }, /jitter/],
    ["exponential", { jitter: Number.NaN }, /jitter/],
    ["linear", { maxAttempts: undefined }, /LinearBackoff: maxAttempts/],
    ["linear", { step: "-5s" }, /LinearBackoff: step must be a duration/],
    ["linear", { step: undefined }, /step must be a duration/],
    ["custom", { compute: "5s" }, /Custom: compute must be a function/],
    ["custom", { maxAttempts: Number.POSITIVE_INFINITY }, /Custom: maxAttempts/],
    ["custom", { jitter: 2 }, /Custom: jitter/],
  ])("%s with %j throws INVALID_RETRY_POLICY matching %s", (kind, options, message) => {
    expect(() => build[kind]!(options)).toThrow(
      expect.objectContaining({ code: "INVALID_RETRY_POLICY", message: expect.stringMatching(message) }),
    );
  });

  test("LinearBackoff and Custom without options explain what is missing instead of crashing", () => {
    expect(() => LinearBackoff(undefined as never)).toThrow(/LinearBackoff: maxAttempts/);
    expect(() => Custom(undefined as never)).toThrow(/Custom: maxAttempts/);
  });

  test.each([0, -1, 1.5, Number.NaN])("retry number %d is rejected: retries count from 1", (retry) => {
    expect(() => ExponentialBackoff().delayBeforeRetry(retry, middle)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
  });
});

describe("describe()", () => {
  test.each([
    [
      ExponentialBackoff(),
      "ExponentialBackoff(5s, 5m, 30m, 2h, 5h, 10h, 1d, 2d, 3d; 9 retries; jitter ± 20%)",
    ],
    [LinearBackoff({ maxAttempts: 5, step: "30s" }), "LinearBackoff(step 30s; 5 retries; no jitter)"],
    [Custom({ maxAttempts: 6, compute: () => 1, jitter: 0.1 }), "Custom(6 retries; jitter ± 10%)"],
  ])("reads as one line", (policy, text) => {
    expect(policy.describe()).toBe(text);
  });
});

describe("spec", () => {
  test.each<[string, RetryPolicy, RetryPolicy["spec"]]>([
    [
      "ExponentialBackoff defaults",
      ExponentialBackoff(),
      { kind: "exponential", schedule: [...DEFAULT_SCHEDULE], maxAttempts: 9, jitter: 0.2 },
    ],
    [
      "ExponentialBackoff with options",
      ExponentialBackoff({ schedule: ["10s", 500], maxAttempts: 3, jitter: 0 }),
      { kind: "exponential", schedule: [10_000, 500], maxAttempts: 3, jitter: 0 },
    ],
    [
      "LinearBackoff",
      LinearBackoff({ maxAttempts: 5, step: "30s", jitter: 0.1 }),
      { kind: "linear", stepMs: 30_000, maxAttempts: 5, jitter: 0.1 },
    ],
    ["Custom has none: a function cannot be stored", Custom({ maxAttempts: 1, compute: () => 1 }), undefined],
  ])("%s", (_label, policy, spec) => {
    expect(policy.spec).toEqual(spec);
    if (spec) expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
  });

  test.each([
    ExponentialBackoff({ schedule: ["1s", "1m"], maxAttempts: 4, jitter: 0.3 }),
    LinearBackoff({ maxAttempts: 3, step: "2s", jitter: 0.5 }),
  ])("a policy rebuilt from its spec delays exactly like the original (%#)", (policy) => {
    const spec = policy.spec!;
    const rebuilt =
      spec.kind === "exponential"
        ? ExponentialBackoff({ schedule: spec.schedule, maxAttempts: spec.maxAttempts, jitter: spec.jitter })
        : LinearBackoff({ step: spec.stepMs, maxAttempts: spec.maxAttempts, jitter: spec.jitter });
    expect(delays(rebuilt, 6, seededRandom(3))).toEqual(delays(policy, 6, seededRandom(3)));
  });

  test("mutating a spec does not change the policy", () => {
    const policy = ExponentialBackoff({ schedule: ["1s"], jitter: 0 });
    const spec = policy.spec;
    if (spec?.kind !== "exponential") throw new Error("expected an exponential spec");
    spec.schedule[0] = 99;
    expect(delays(policy, 2)).toEqual([1_000, null]);
  });
});

describe("isRetryPolicy", () => {
  test.each([
    [ExponentialBackoff(), true],
    [LinearBackoff({ maxAttempts: 1, step: 1 }), true],
    [Custom({ maxAttempts: 1, compute: () => 1 }), true],
    [{ ...ExponentialBackoff(), kind: "fibonacci" }, false],
    [{ ...ExponentialBackoff(), maxAttempts: -1 }, false],
    [{ kind: "linear", maxAttempts: 3 }, false],
    [{ maxAttempts: 3, step: "30s" }, false],
    [null, false],
    ["ExponentialBackoff", false],
  ])("%#: %j → %s", (value, expected) => {
    expect(isRetryPolicy(value)).toBe(expected);
  });
});
