import * as v from "valibot";
import { ExponentialBackoff, isRetryPolicy, type RetryPolicy } from "./backoff.js";
import { type Clock, systemClock } from "./clock.js";
import { type CredentialsConfig, withCredentials } from "./credentials/credentials-api.js";
import type { CredentialsOptions } from "./credentials/credentials-options.js";
import { type Duration, parseDuration } from "./duration.js";
import { ConfigurationError, type ConfigurationIssue } from "./errors.js";
import type { InboundSourceOptions } from "@postel/signing/inbound";
import type { Endpoint, OutboundEvent } from "./outbound/types.js";
import { type AnyEventCatalog, isEventCatalog } from "./outbound/catalog.js";
import { defaultRandom, type Random } from "./random.js";
import type { AutoDisableSettings, CircuitBreakerSettings } from "./storage/records.js";
import type { Storage } from "./storage/storage.js";
import type { TelemetryOptions } from "./telemetry/telemetry.js";

/** Circuit-breaker options (globally or per endpoint). */
export interface CircuitBreakerOptions {
  /** Failure ratio over `window` that opens the circuit, in (0, 1]. Default 0.5. */
  threshold?: number;
  /** How long the circuit stays open before one probe decides. Default `"5m"`. */
  cooldown?: Duration;
  /** Rolling window the ratio is measured over. Default `"1m"`. */
  window?: Duration;
  /** Attempts needed in the window before the ratio counts. Default 20. */
  minimumVolume?: number;
}

/**
 * Auto-disable options (globally or per endpoint). Auto-disable takes an endpoint that has been
 * broken for long out of rotation (its deliveries are held until `enable(id)`); a burst of failures
 * never disables it. The circuit breaker acts first: with a breaker, only an endpoint whose circuit
 * is open (it just opened, or a probe just failed) is considered, so with the defaults a dead
 * endpoint is disabled at the first failed probe after about an hour.
 */
export interface AutoDisableOptions {
  /**
   * Failure ratio, in (0, 1], that the whole `window` and also its oldest part (its first tenth, or
   * two breaker cooldowns, whichever is longer) must reach: the endpoint was already failing a whole
   * window ago. Default 0.9.
   */
  failureRate?: number;
  /** How long the endpoint must have been failing. Default `"1h"`. */
  window?: Duration;
  /**
   * Attempts needed in the window before the ratio counts. Default 20. With a breaker it is capped
   * at `window / cooldown` (an open circuit lets one probe through per cooldown).
   */
  minAttempts?: number;
}

/**
 * Limits on the requests sent to one endpoint, enforced across every instance. Set here they are
 * the default of every endpoint; an endpoint's own `maxInFlight` / `rateLimit` replaces them.
 */
export interface EndpointLimitOptions {
  /** Most requests in flight to one endpoint at once, an integer from 1 to 10,000. Default: no limit beyond its fair share. */
  maxInFlight?: number;
  /**
   * Most requests per second to one endpoint, from 0.01 to 100,000; fractions allowed (`0.5` = one
   * request every 2 s). Default: no limit.
   */
  rateLimit?: number;
}

/** Worker pool options. */
export interface WorkerOptions {
  /**
   * HTTP requests in flight at once per process. Default `"auto"`: starts at 256 and grows, up to
   * `maxConcurrency`, while receivers answer slowly enough that more in flight means more delivered (each
   * step kept only if it pays). A number fixes it. Every endpoint gets a fair share of it (see README).
   */
  concurrency?: number | "auto";
  /** Upper bound of the `"auto"` concurrency (memory and sockets). Default 1024. */
  maxConcurrency?: number;
  /** Deliveries claimed per round trip, at most. Default 64. */
  batchSize?: number;
  /** How often idle workers look for due work when nothing wakes them. Default `"1s"`. */
  pollInterval?: Duration;
  /** How long a claim is leased (renewed while working). Default `"60s"`. */
  leaseDuration?: Duration;
  /** Identifies this process's workers in lease rows. Default: random. */
  id?: string;
}

/**
 * Retention of finished history. Without it, Postel keeps every message, delivery and attempt
 * forever. With it, the workers of `postel.start()` delete, every `interval`, the finished messages
 * (`dispatched`, `dead-lettered`, `expired`) older than `maxAge` with all their deliveries and
 * attempts, a batch at a time; `postel.outbound.prune()` runs the same pass on demand.
 */
export interface RetentionOptions {
  /** Delete finished messages once they finished this long ago, e.g. `"30d"`. At least `"1m"`. */
  maxAge: Duration;
  /** Messages examined (and at most deleted, with their rows) per transaction, 1 to 10,000. Default 500. */
  batchSize?: number;
  /** How often the workers run a pass (jittered ±25%). Default `"5m"`, at least `"1s"`. */
  interval?: Duration;
}

/** HTTP client options. */
export interface HttpOptions {
  /** Whole-request timeout. Default `"15s"`. */
  timeout?: Duration;
  /** Connect timeout. Default `"5s"`. */
  connectTimeout?: Duration;
  /** Default `"Postel/0 (+webhooks)"`. */
  userAgent?: string;
  /** Bytes of the response body kept in the audit trail. Default 4096. */
  maxResponseBytes?: number;
  /** Allow endpoints on private, loopback and link-local addresses (local development, tests). Default false. */
  allowPrivateNetworks?: boolean;
  /** Longest `Retry-After` honoured. Default `"1d"`. */
  maxRetryAfter?: Duration;
}

/** Options of the sending side. */
export interface OutboundOptions<
  S extends Storage<unknown> = Storage<unknown>,
  E extends AnyEventCatalog | undefined = AnyEventCatalog | undefined,
> {
  storage: S;
  /**
   * The event catalog (`defineEvents()`): with it, `send()` takes only declared types, infers and
   * checks `data` against their schemas, and endpoints subscribe only to globs matching a declared
   * type. Default: none (any valid type, any JSON data).
   */
  events?: E;
  /** Default retry policy. Default `ExponentialBackoff()`. */
  retryPolicy?: RetryPolicy;
  /** Policies endpoints can reference by name (needed for `Custom` policies on endpoints). */
  retryPolicies?: Record<string, RetryPolicy>;
  /** Circuit breaker for every endpoint, or `false` to turn it off. */
  circuitBreaker?: CircuitBreakerOptions | false;
  /** Auto-disable for every endpoint, or `false` to turn it off. */
  autoDisable?: AutoDisableOptions | false;
  /** Default concurrency and rate limits of every endpoint (each endpoint can set its own). */
  limits?: EndpointLimitOptions;
  workers?: WorkerOptions;
  /** Delete finished history older than an age (default: keep it forever). */
  retention?: RetentionOptions;
  http?: HttpOptions;
  /** Secrets generated for new endpoints: `"v1"` (HMAC, `whsec_`, default) or `"v1a"` (Ed25519, `whsk_`). */
  signing?: { algorithm?: "v1" | "v1a" };
  /** Largest serialised `data` accepted by `send()`. Default 256 KiB. */
  maxPayloadBytes?: number;
  /** Filter functions endpoints reference by name (`filterFn: "name"`). */
  filters?: Record<string, (event: OutboundEvent) => boolean>;
  /** Body transforms endpoints reference by name (`transform: "name"`); the result is what is signed and sent. */
  transforms?: Record<string, (event: OutboundEvent, endpoint: Endpoint) => unknown>;
  /**
   * How signing secrets and custom header values are stored: encrypted with your keys
   * (`{ keys: [{ id, key }] }`, the first encrypts) or a KMS `keyring`, or `{ encryption: "off" }`.
   * Default: plain text, with a warning at start-up (README "Credentials at rest").
   */
  credentials?: CredentialsOptions;
}

/** Options of `Postel()`. */
export interface PostelOptions<
  S extends Storage<unknown> = Storage<unknown>,
  I extends Record<string, InboundSourceOptions<unknown>> = Record<string, InboundSourceOptions<unknown>>,
  E extends AnyEventCatalog | undefined = AnyEventCatalog | undefined,
> {
  outbound?: OutboundOptions<S, E>;
  /** Named sources webhooks are received from: `{ billing: { verify: "whsec_...", dedup } }`. */
  inbound?: I;
  /** Source of time. Default: the system clock. Tests pass a `ManualClock`. */
  clock?: Clock;
  /** Source of randomness for jitter. Default `Math.random`. */
  random?: Random;
  /**
   * OpenTelemetry traces and metrics (see the README's Telemetry section). `true` uses the global
   * providers and propagator; an object names its own. Default off: nothing of OpenTelemetry is
   * loaded and nothing is recorded.
   */
  telemetry?: TelemetryOptions | boolean;
}

/** Outbound options after validation, with every default applied and durations in ms. */
export interface OutboundConfig {
  storage: Storage<unknown>;
  retryPolicy: RetryPolicy;
  retryPolicies: Record<string, RetryPolicy>;
  circuitBreaker: CircuitBreakerSettings | null;
  autoDisable: AutoDisableSettings | null;
  /** Limits of endpoints that set none of their own; null = no limit. */
  limits: { maxInFlight: number | null; rateLimit: number | null };
  workers: {
    /** In-flight budget bounds: equal when the user fixed `concurrency`. */
    concurrency: { min: number; max: number };
    batchSize: number;
    pollIntervalMs: number;
    leaseDurationMs: number;
    id: string;
  };
  /** Null when retention is off (history is kept forever). */
  retention: RetentionSettings | null;
  http: {
    timeoutMs: number;
    connectTimeoutMs: number;
    userAgent: string;
    maxResponseBytes: number;
    allowPrivateNetworks: boolean;
    maxRetryAfterMs: number;
  };
  algorithm: "v1" | "v1a";
  maxPayloadBytes: number;
  filters: Record<string, (event: OutboundEvent) => boolean>;
  transforms: Record<string, (event: OutboundEvent, endpoint: Endpoint) => unknown>;
  /** Null without a catalog. */
  events: AnyEventCatalog | null;
  /** How endpoint credentials are stored (`storage` above already encrypts and decrypts them). */
  credentials: CredentialsConfig;
}

/** Retention after validation, in milliseconds. */
export interface RetentionSettings {
  maxAgeMs: number;
  batchSize: number;
  intervalMs: number;
}

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
const count = (what: string, min: number) =>
  v.pipe(
    v.number(`${what} must be a number`),
    v.integer(`${what} must be an integer`),
    v.minValue(min, `${what} must be >= ${min}`),
  );

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
    minimumVolume: v.optional(count("minimumVolume", 1), 20),
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
    minAttempts: v.optional(count("minAttempts", 1), 20),
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

const isFunction = (x: unknown): x is (...args: never[]) => unknown => typeof x === "function";

const StorageSchema = v.custom<Storage<unknown>>(
  (x) =>
    typeof x === "object" &&
    x !== null &&
    ["enqueue", "claimDue", "recordOutcomes", "claimFanout"].every((m) =>
      isFunction((x as Record<string, unknown>)[m]),
    ),
  "must be a Storage (InMemoryStorage(), PostgresStorage(...) or SqliteStorage(...))",
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

const atLeast = (ms: number, message: string) =>
  v.pipe(
    DurationMs,
    v.check((n: number) => n >= ms, message),
  );

const RetentionSchema = v.pipe(
  objectNotArray("retention"),
  v.strictObject({
    maxAge: atLeast(
      60_000,
      'must be at least "1m" (a shorter age deletes history before anyone can read it), e.g. "30d"',
    ),
    batchSize: v.optional(PruneBatchSizeSchema, DEFAULT_PRUNE_BATCH),
    interval: v.optional(atLeast(1000, 'must be at least "1s", e.g. "5m"'), "5m"),
  }),
  v.transform(
    (o): RetentionSettings => ({ maxAgeMs: o.maxAge, batchSize: o.batchSize, intervalMs: o.interval }),
  ),
);

const OutboundSchema = v.strictObject({
  storage: StorageSchema,
  retryPolicy: v.optional(RetryPolicySchema),
  retryPolicies: v.optional(
    v.pipe(objectNotArray("retryPolicies"), v.record(v.string(), RetryPolicySchema)),
    {},
  ),
  // `false` (turned off) arrives here as null (see withFalseAsNull): a union would hide nested issues.
  circuitBreaker: v.optional(v.nullable(CircuitBreakerSchema), {}),
  autoDisable: v.optional(v.nullable(AutoDisableSchema), {}),
  limits: v.optional(
    v.pipe(
      objectNotArray("limits"),
      v.strictObject({
        maxInFlight: v.optional(maxInFlightSchema("leave it out for no limit")),
        rateLimit: v.optional(rateLimitSchema("leave it out for no limit")),
      }),
    ),
    {},
  ),
  workers: v.optional(
    v.pipe(
      objectNotArray("workers"),
      v.strictObject({
        concurrency: v.optional(
          v.union(
            [v.literal("auto"), count("concurrency", 1)],
            'concurrency must be "auto" or an integer >= 1',
          ),
          "auto",
        ),
        maxConcurrency: v.optional(count("maxConcurrency", 1), 1024),
        batchSize: v.optional(count("batchSize", 1), 64),
        pollInterval: v.optional(DurationMs, "1s"),
        leaseDuration: v.optional(DurationMs, "60s"),
        id: v.optional(v.pipe(v.string(), v.minLength(1))),
      }),
    ),
    {},
  ),
  retention: v.optional(RetentionSchema),
  http: v.optional(
    v.pipe(
      objectNotArray("http"),
      v.strictObject({
        timeout: v.optional(DurationMs, "15s"),
        connectTimeout: v.optional(DurationMs, "5s"),
        userAgent: v.optional(v.string(), "Postel/0 (+webhooks)"),
        maxResponseBytes: v.optional(count("maxResponseBytes", 0), 4096),
        allowPrivateNetworks: v.optional(v.boolean(), false),
        maxRetryAfter: v.optional(DurationMs, "1d"),
      }),
    ),
    {},
  ),
  signing: v.optional(
    v.pipe(
      objectNotArray("signing"),
      v.strictObject({ algorithm: v.optional(v.picklist(["v1", "v1a"]), "v1") }),
    ),
    {},
  ),
  maxPayloadBytes: v.optional(count("maxPayloadBytes", 1), 256 * 1024),
  events: v.optional(
    v.custom<AnyEventCatalog>(isEventCatalog, "must be an event catalog made by defineEvents({ ... })"),
  ),
  filters: v.optional(
    v.pipe(
      objectNotArray("filters"),
      v.record(v.string(), v.custom<(e: OutboundEvent) => boolean>(isFunction, "must be a function")),
    ),
    {},
  ),
  // Validated by parseCredentialsOptions, whose issues carry codes (INVALID_ENCRYPTION_KEY, ...).
  credentials: v.optional(v.unknown()),
  transforms: v.optional(
    v.pipe(
      objectNotArray("transforms"),
      v.record(
        v.string(),
        v.custom<(e: OutboundEvent, ep: Endpoint) => unknown>(isFunction, "must be a function"),
      ),
    ),
    {},
  ),
});

const PostelSchema = v.strictObject({
  outbound: v.optional(v.pipe(objectNotArray("outbound"), OutboundSchema)),
  // Validated by the receiver itself (parseInboundSources), which lists every bad source at once.
  inbound: v.optional(v.record(v.string(), v.unknown(), "must map source names to { verify, ... }")),
  clock: v.optional(
    v.custom<Clock>(
      (x) =>
        typeof x === "object" &&
        x !== null &&
        isFunction((x as Clock).now) &&
        isFunction((x as Clock).setTimer),
      "must be a Clock ({ now(), setTimer() }), e.g. new ManualClock()",
    ),
  ),
  random: v.optional(v.custom<Random>(isFunction, "must be a function returning a number in [0, 1)")),
  // `true` arrives here as {} and `false` as null (see withFalseAsNull): a union would hide nested issues.
  telemetry: v.optional(
    v.nullable(
      v.pipe(
        objectNotArray("telemetry"),
        v.strictObject({
          tracerProvider: v.optional(
            hasMethods("getTracer", "a TracerProvider (e.g. the SDK's NodeTracerProvider)"),
          ),
          meterProvider: v.optional(hasMethods("getMeter", "a MeterProvider (e.g. the SDK's MeterProvider)")),
          propagator: v.optional(
            hasMethods("inject", "a TextMapPropagator (e.g. new W3CTraceContextPropagator())", "extract"),
          ),
        }),
      ),
    ),
  ),
});

function hasMethods<T>(method: string, what: string, ...more: string[]) {
  return v.custom<T>(
    (x) =>
      typeof x === "object" &&
      x !== null &&
      [method, ...more].every((m) => isFunction((x as Record<string, unknown>)[m])),
    `must be ${what}; or leave it out for the global one of @opentelemetry/api`,
  );
}

/** Validated `Postel()` options. */
export interface PostelConfig {
  outbound: OutboundConfig | null;
  clock: Clock;
  random: Random;
  /** Null when telemetry is off. */
  telemetry: TelemetryOptions | null;
}

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

/** Validates `Postel()` options, throwing one `ConfigurationError` that lists every bad field. */
export function parsePostelOptions(options: unknown, workerId: () => string): PostelConfig {
  const result = v.safeParse(PostelSchema, withFalseAsNull(options));
  if (!result.success) throw new ConfigurationError(toConfigurationIssues(result.issues));
  const { outbound, clock = systemClock, random = defaultRandom } = result.output;
  const telemetry = (result.output.telemetry ?? null) as TelemetryOptions | null;
  if (!outbound) return { outbound: null, clock, random, telemetry };
  const issues: ConfigurationIssue[] = [];
  if (outbound.signing.algorithm === undefined) outbound.signing.algorithm = "v1";
  const { storage, credentials } = withCredentials(outbound.credentials, outbound.storage, clock, issues);
  const config: OutboundConfig = {
    storage,
    retryPolicy: outbound.retryPolicy ?? ExponentialBackoff(),
    retryPolicies: outbound.retryPolicies,
    circuitBreaker: outbound.circuitBreaker,
    autoDisable: outbound.autoDisable,
    limits: {
      maxInFlight: outbound.limits.maxInFlight ?? null,
      rateLimit: outbound.limits.rateLimit ?? null,
    },
    workers: {
      concurrency: concurrencyBounds(outbound.workers.concurrency, outbound.workers.maxConcurrency),
      batchSize: outbound.workers.batchSize,
      pollIntervalMs: outbound.workers.pollInterval,
      leaseDurationMs: outbound.workers.leaseDuration,
      id: outbound.workers.id ?? workerId(),
    },
    retention: outbound.retention ?? null,
    http: {
      timeoutMs: outbound.http.timeout,
      connectTimeoutMs: outbound.http.connectTimeout,
      userAgent: outbound.http.userAgent,
      maxResponseBytes: outbound.http.maxResponseBytes,
      allowPrivateNetworks: outbound.http.allowPrivateNetworks,
      maxRetryAfterMs: outbound.http.maxRetryAfter,
    },
    algorithm: outbound.signing.algorithm,
    maxPayloadBytes: outbound.maxPayloadBytes,
    filters: outbound.filters,
    transforms: outbound.transforms,
    events: outbound.events ?? null,
    credentials,
  };
  if (config.workers.leaseDurationMs < 1000) {
    issues.push({
      path: "outbound.workers.leaseDuration",
      message: "must be at least 1s so leases can be renewed",
    });
  }
  const missing = (["pruneFinished", "pruneHealth"] as const).filter(
    (verb) => typeof config.storage[verb] !== "function",
  );
  if (config.retention && missing.length > 0) {
    issues.push({
      path: "outbound.retention",
      message: `needs the storage to delete history, and ${config.storage.name} has no ${missing.map((verb) => `${verb}()`).join(" or ")}: implement it (runStorageConformance checks it) or leave retention out`,
    });
  }
  if (issues.length > 0) throw new ConfigurationError(issues);
  return { outbound: config, clock, random, telemetry };
}

/** The pool starts at 256 (or `max`, if lower) and, with `"auto"`, may grow to `max`. */
function concurrencyBounds(concurrency: number | "auto", max: number): { min: number; max: number } {
  if (concurrency !== "auto") return { min: concurrency, max: concurrency };
  return { min: Math.min(AUTO_CONCURRENCY_START, max), max };
}

const AUTO_CONCURRENCY_START = 256;

/**
 * Maps `circuitBreaker: false` / `autoDisable: false` / `telemetry: false` to null and
 * `telemetry: true` to `{}` (every global) so the schema can report nested issues.
 */
function withFalseAsNull(options: unknown): unknown {
  if (typeof options !== "object" || options === null) return options ?? {};
  const telemetry = (options as { telemetry?: unknown }).telemetry;
  if (typeof telemetry === "boolean") options = { ...(options as object), telemetry: telemetry ? {} : null };
  const outbound = (options as { outbound?: unknown }).outbound;
  if (typeof outbound !== "object" || outbound === null) return options;
  const copy: Record<string, unknown> = { ...outbound };
  for (const key of ["circuitBreaker", "autoDisable"]) if (copy[key] === false) copy[key] = null;
  return { ...(options as object), outbound: copy };
}
