import * as v from "valibot";
import { isRetryPolicy, type RetryPolicy } from "../backoff.js";
import { type Duration, parseDuration } from "../duration.js";
import type { ConfigurationIssue } from "../errors.js";
import type { AutoDisableSettings, CircuitBreakerSettings } from "../storage/records.js";

const DURATION_HINT = 'must be a duration: "250ms", "30s", "5m", "2h", "1d" or milliseconds';

/** A valibot schema for a `Duration`, output in milliseconds. */
export const DurationMs = v.pipe(
  v.custom<Duration>((x) => parseDuration(x) !== undefined, DURATION_HINT),
  v.transform((x) => parseDuration(x) as number),
);

const ratio = (what: string) =>
  v.pipe(
    v.number(`${what} must be a number`),
    v.gtValue(0, `${what} must be > 0`),
    v.maxValue(1, `${what} must be <= 1`),
  );

/** An integer of at least `min`, named `what` in its messages. */
export const countSchema = (what: string, min: number) =>
  v.pipe(
    v.number(`${what} must be a number`),
    v.integer(`${what} must be an integer`),
    v.minValue(min, `${what} must be >= ${min}`),
  );

/** Whether `x` is a function (registries, clocks and storages are checked by their methods). */
export const isFunction = (x: unknown): x is (...args: never[]) => unknown => typeof x === "function";

/**
 * An options object. valibot's object and record schemas take an array as one: `autoDisable: []`
 * would silently mean the defaults, and `headers: ["a"]` send a header named "0".
 */
export const objectNotArray = (what: string) =>
  v.custom<Record<string, unknown>>(
    (x) => typeof x === "object" && x !== null && !Array.isArray(x),
    `${what} must be an object, not an array or a primitive`,
  );

/** Circuit-breaker options → settings. */
export const CircuitBreakerSchema = v.pipe(
  objectNotArray("circuitBreaker"),
  v.strictObject({
    threshold: v.optional(ratio("threshold"), 0.5),
    cooldown: v.optional(DurationMs, "5m"),
    window: v.optional(DurationMs, "1m"),
    minimumVolume: v.optional(countSchema("minimumVolume", 1), 20),
  }),
  v.transform(
    (o): CircuitBreakerSettings => ({
      threshold: o.threshold,
      cooldownMs: o.cooldown,
      windowMs: o.window,
      minimumVolume: o.minimumVolume,
    }),
  ),
);

/** Auto-disable options → settings. */
export const AutoDisableSchema = v.pipe(
  objectNotArray("autoDisable"),
  v.strictObject({
    failureRate: v.optional(ratio("failureRate"), 0.9),
    window: v.optional(DurationMs, "1h"),
    minAttempts: v.optional(countSchema("minAttempts", 1), 20),
  }),
  v.transform(
    (o): AutoDisableSettings => ({
      failureRate: o.failureRate,
      windowMs: o.window,
      minAttempts: o.minAttempts,
    }),
  ),
);

/** Bounds of `maxInFlight` (requests in flight to one endpoint). */
const MAX_IN_FLIGHT_RANGE = { min: 1, max: 10_000 } as const;
/** Bounds of `rateLimit` (requests per second to one endpoint). */
const RATE_LIMIT_RANGE = { min: 0.01, max: 100_000 } as const;

/** `maxInFlight`: an integer in range; `fix` tells what to write instead. */
export const maxInFlightSchema = (fix: string) => {
  const { min, max } = MAX_IN_FLIGHT_RANGE;
  const message = `must be a whole number of requests in flight at once, from ${min} to ${max}; ${fix}`;
  return v.pipe(
    v.number(message),
    v.check((n) => Number.isInteger(n) && n >= min && n <= max, message),
  );
};

/** `rateLimit`: a finite number of requests per second in range; `fix` tells what to write instead. */
export const rateLimitSchema = (fix: string) => {
  const { min, max } = RATE_LIMIT_RANGE;
  const message =
    `must be a number of requests per second from ${min} to ${max} ` +
    `(fractions allowed: 0.5 = one request every 2s); ${fix}`;
  return v.pipe(
    v.number(message),
    v.check((n) => Number.isFinite(n) && n >= min && n <= max, message),
  );
};

/** A `RetryPolicy` built by `ExponentialBackoff`, `LinearBackoff` or `Custom`. */
export const RetryPolicySchema = v.custom<RetryPolicy>(
  isRetryPolicy,
  "must be a retry policy built with ExponentialBackoff(), LinearBackoff() or Custom()",
);

/** Most messages one prune batch (one transaction) may examine. */
export const MAX_PRUNE_BATCH = 10_000;
/** Messages one prune batch examines unless configured. */
export const DEFAULT_PRUNE_BATCH = 500;

/** `batchSize` of retention and `prune()`: an integer from 1 to `MAX_PRUNE_BATCH`. */
export const PruneBatchSizeSchema = v.pipe(
  v.number(`must be a whole number of messages per batch, from 1 to ${MAX_PRUNE_BATCH}, e.g. 500`),
  v.check(
    (n) => Number.isInteger(n) && n >= 1 && n <= MAX_PRUNE_BATCH,
    `must be a whole number of messages per batch, from 1 to ${MAX_PRUNE_BATCH}, e.g. 500`,
  ),
);

const MISSING_STORAGE =
  "is required: the database Postel keeps its outbox in. Pass InMemoryStorage() (from @postel/core, for " +
  'tests and demos), PostgresStorage({ url }) (from @postel/storage-postgres) or SqliteStorage({ url: "file:app.db" }) ' +
  "(from @postel/storage-sqlite)";

const MISSING_MAX_AGE =
  'is required: how long finished history is kept, e.g. "30d" (leave `retention` out to keep history forever)';

/** Turns valibot issues into `{ path, message }` pairs a human can act on. */
export function toConfigurationIssues(issues: readonly v.BaseIssue<unknown>[]): ConfigurationIssue[] {
  return issues.map((issue) => {
    const path = v.getDotPath(issue) ?? "";
    const unknownKey =
      issue.kind === "schema" && issue.type === "strict_object" && issue.expected === "never";
    if (unknownKey) return { path, message: "unknown option (check the spelling)" };
    if (path === "outbound.storage" && issue.received === "undefined")
      return { path, message: MISSING_STORAGE };
    if (path === "outbound.retention.maxAge" && issue.received === "undefined")
      return { path, message: MISSING_MAX_AGE };
    return { path, message: issue.message };
  });
}
