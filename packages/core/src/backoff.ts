import { type Duration, formatDuration, parseDuration, toMs } from "./duration.js";
import { InvalidInputError } from "./errors.js";
import type { Random } from "./random.js";

/**
 * How long to wait before each retry of a failed delivery, and how many retries there are.
 * `maxAttempts` counts retries: the initial attempt is not one, so a delivery makes at most
 * `1 + maxAttempts` requests.
 */
export interface RetryPolicy {
  readonly kind: "exponential" | "linear" | "custom";
  readonly maxAttempts: number;
  /** Milliseconds to wait before retry `retry` (1-based), or `null` when it exceeds `maxAttempts`. */
  delayBeforeRetry(retry: number, random: Random): number | null;
  /** One line for logs and error messages. */
  describe(): string;
  /** The policy's parameters as plain JSON, so an endpoint can store it; absent for `Custom` (a function). */
  readonly spec?: RetryPolicySpecOf;
}

/**
 * A policy made of plain parameters (`ExponentialBackoff`, `LinearBackoff`): it can be stored with an
 * endpoint, so `endpoints.create/update({ retryPolicy })` takes it directly.
 */
export interface StorableRetryPolicy extends RetryPolicy {
  readonly kind: "exponential" | "linear";
  readonly spec: RetryPolicySpecOf;
}

/**
 * A `Custom` policy: its delays come from a function, which cannot be stored, so it is used as
 * `outbound.retryPolicy` or registered in `outbound.retryPolicies` and named by endpoints.
 */
export interface CustomRetryPolicy extends RetryPolicy {
  readonly kind: "custom";
}

/** The storable parameters of a built-in policy (`ms` numbers), from which it can be rebuilt. */
export type RetryPolicySpecOf =
  | { kind: "exponential"; schedule: number[]; maxAttempts: number; jitter: number }
  | { kind: "linear"; stepMs: number; maxAttempts: number; jitter: number };

/** The default `ExponentialBackoff` schedule in ms: 5s 5m 30m 2h 5h 10h 1d 2d 3d. */
export const DEFAULT_SCHEDULE: readonly number[] = Object.freeze(
  (["5s", "5m", "30m", "2h", "5h", "10h", "1d", "2d", "3d"] as const).map((d) => toMs(d)),
);

const DEFAULT_JITTER = 0.2;

/** Options of `ExponentialBackoff`; every field is optional. */
export interface ExponentialBackoffOptions {
  /** Delay before retry k is `schedule[k-1]`; the last entry is reused past the end. */
  readonly schedule?: readonly Duration[];
  /** Number of retries; defaults to the schedule length. `0` means no retries. */
  readonly maxAttempts?: number;
  /** Uniform ± fraction applied to each delay, in [0, 1]. Default 0.2 (± 20%). */
  readonly jitter?: number;
}

/**
 * Retries on a fixed schedule of delays (default: 5s 5m 30m 2h 5h 10h 1d 2d 3d, ± 20% jitter).
 * @example
 * ExponentialBackoff({ schedule: ["10s", "1m", "10m", "1h"] }); // 4 retries
 */
export function ExponentialBackoff(options: ExponentialBackoffOptions = {}): StorableRetryPolicy {
  const name = "ExponentialBackoff";
  const schedule = options.schedule === undefined ? DEFAULT_SCHEDULE : readSchedule(name, options.schedule);
  const maxAttempts = readMaxAttempts(name, options.maxAttempts ?? schedule.length);
  const jitter = readJitter(name, options.jitter ?? DEFAULT_JITTER);
  return {
    kind: "exponential",
    maxAttempts,
    spec: { kind: "exponential", schedule: [...schedule], maxAttempts, jitter },
    delayBeforeRetry: (retry, random) =>
      withinBudget(retry, maxAttempts)
        ? applyJitter(schedule[Math.min(retry, schedule.length) - 1]!, jitter, random)
        : null,
    describe: () =>
      `${name}(${schedule.map(formatDuration).join(", ")}; ${maxAttempts} retries; ${describeJitter(jitter)})`,
  };
}

/** Options of `LinearBackoff`. */
export interface LinearBackoffOptions {
  /** Number of retries. `0` means no retries. */
  readonly maxAttempts: number;
  /** Retry k waits `k × step`. */
  readonly step: Duration;
  /** Uniform ± fraction applied to each delay, in [0, 1]. Default 0 (none). */
  readonly jitter?: number;
}

/**
 * Waits `k × step` before retry k: predictable, slower escalation.
 * @example
 * LinearBackoff({ maxAttempts: 5, step: "30s" }); // 30s, 1m, 1m 30s, 2m, 2m 30s
 */
export function LinearBackoff(options: LinearBackoffOptions): StorableRetryPolicy {
  const name = "LinearBackoff";
  const maxAttempts = readMaxAttempts(name, options?.maxAttempts);
  const step = readDuration(name, "step", options?.step);
  const jitter = readJitter(name, options?.jitter ?? 0);
  return {
    kind: "linear",
    maxAttempts,
    spec: { kind: "linear", stepMs: step, maxAttempts, jitter },
    delayBeforeRetry: (retry, random) =>
      withinBudget(retry, maxAttempts) ? applyJitter(retry * step, jitter, random) : null,
    describe: () =>
      `${name}(step ${formatDuration(step)}; ${maxAttempts} retries; ${describeJitter(jitter)})`,
  };
}

/** Options of `Custom`. */
export interface CustomBackoffOptions {
  /** Number of retries. `0` means no retries. */
  readonly maxAttempts: number;
  /** Given the number of failed attempts so far (k before retry k), returns the delay before the next. */
  readonly compute: (failedAttempts: number) => Duration;
  /** Uniform ± fraction applied to each delay, in [0, 1]. Default 0 (none). */
  readonly jitter?: number;
}

/**
 * Delays computed by your own function, for SLAs the canned strategies don't fit.
 * @example
 * Custom({ maxAttempts: 6, compute: (failed) => `${Math.min(3600, failed ** 2 * 5)}s` });
 */
export function Custom(options: CustomBackoffOptions): CustomRetryPolicy {
  const name = "Custom";
  const maxAttempts = readMaxAttempts(name, options?.maxAttempts);
  const compute: unknown = options?.compute;
  if (typeof compute !== "function") {
    throw invalid(`${name}: compute must be a function (failedAttempts) => Duration, got ${typeof compute}.`);
  }
  const jitter = readJitter(name, options.jitter ?? 0);
  return {
    kind: "custom",
    maxAttempts,
    delayBeforeRetry(retry, random) {
      if (!withinBudget(retry, maxAttempts)) return null;
      // Before retry k the initial attempt and k-1 retries have failed: k failures so far.
      const delay = toMs(options.compute(retry), `delay returned by ${name} compute(${retry})`);
      return applyJitter(delay, jitter, random);
    },
    describe: () => `${name}(${maxAttempts} retries; ${describeJitter(jitter)})`,
  };
}

/** True for a value built by `ExponentialBackoff`, `LinearBackoff` or `Custom` (or shaped like one). */
export function isRetryPolicy(x: unknown): x is RetryPolicy {
  if (typeof x !== "object" || x === null) return false;
  const candidate = x as Record<string, unknown>;
  return (
    (candidate["kind"] === "exponential" ||
      candidate["kind"] === "linear" ||
      candidate["kind"] === "custom") &&
    Number.isSafeInteger(candidate["maxAttempts"]) &&
    (candidate["maxAttempts"] as number) >= 0 &&
    typeof candidate["delayBeforeRetry"] === "function" &&
    typeof candidate["describe"] === "function"
  );
}

function withinBudget(retry: number, maxAttempts: number): boolean {
  if (!Number.isSafeInteger(retry) || retry < 1) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      `Retry numbers start at 1 (the initial attempt is not a retry); got ${retry}.`,
    );
  }
  return retry <= maxAttempts;
}

function applyJitter(delay: number, jitter: number, random: Random): number {
  if (jitter === 0) return delay;
  return Math.max(0, Math.round(delay * (1 + jitter * (2 * random() - 1))));
}

function readMaxAttempts(name: string, value: unknown): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  throw invalid(
    `${name}: maxAttempts must be a non-negative integer counting retries (0 = no retries), got ${String(value)}.`,
  );
}

function readJitter(name: string, value: unknown): number {
  if (typeof value === "number" && value >= 0 && value <= 1) return value;
  throw invalid(`${name}: jitter must be a fraction between 0 and 1 (0.2 = ± 20%), got ${String(value)}.`);
}

function readDuration(name: string, field: string, value: unknown): number {
  const ms = parseDuration(value);
  if (ms !== undefined) return ms;
  throw invalid(
    `${name}: ${field} must be a duration like "30s", "5m" or a number of milliseconds, got ${JSON.stringify(value) ?? String(value)}.`,
  );
}

function readSchedule(name: string, value: unknown): readonly number[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalid(`${name}: schedule must be a non-empty array of durations, e.g. ["10s", "1m", "10m"].`);
  }
  return value.map((entry, index) => readDuration(name, `schedule[${index}]`, entry));
}

function describeJitter(jitter: number): string {
  return jitter === 0 ? "no jitter" : `jitter ± ${Math.round(jitter * 100)}%`;
}

function invalid(message: string): InvalidInputError {
  return new InvalidInputError("INVALID_RETRY_POLICY", message);
}
