import * as v from "valibot";
import { ExponentialBackoff } from "../backoff.js";
import { type Clock, systemClock } from "../clock.js";
import { withCredentials } from "../credentials/credentials-api.js";
import { ConfigurationError, type ConfigurationIssue } from "../errors.js";
import { defaultRandom, type Random } from "../random.js";
import { storageShapeIssues } from "../storage/capabilities.js";
import type { TelemetryOptions } from "./options.js";
import { OutboundSchema } from "./outbound-schema.js";
import type { OutboundConfig, PostelConfig } from "./resolved.js";
import { isFunction, objectNotArray, toConfigurationIssues } from "./schemas.js";

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

/**
 * Why `outbound` is refused on Bun. Requests go out through undici's `Agent` (the private-network
 * guard at connect time, the timeouts, a pool per endpoint); Bun answers `undici` with a partial
 * shim of its own, where every such request fails as a network error: deliveries would only retry
 * until they dead-letter. Deno runs the real undici, and sends.
 */
const BUN_CANNOT_SEND =
  "sending webhooks needs Node.js or Deno: on Bun, undici's Agent (which Postel sends through) is a " +
  "partial shim and every request fails as a network error. Send from a Node.js process (the outbox " +
  "is in your database: any process of your app can run postel.start()); receiving (the gate) works on Bun.";

/** Whether this is Bun (it sets `process.versions.bun`). */
function onBun(): boolean {
  return typeof process !== "undefined" && typeof process.versions?.["bun"] === "string";
}

/** Validates `Postel()` options, throwing one `ConfigurationError` that lists every bad field. */
export function parsePostelOptions(options: unknown, workerId: () => string): PostelConfig {
  const result = v.safeParse(PostelSchema, withFalseAsNull(options));
  if (!result.success) throw new ConfigurationError(toConfigurationIssues(result.issues));
  const { outbound, clock = systemClock, random = defaultRandom } = result.output;
  const telemetry = (result.output.telemetry ?? null) as TelemetryOptions | null;
  if (!outbound) return { outbound: null, clock, random, telemetry };
  const issues: ConfigurationIssue[] = [];
  if (onBun()) issues.push({ path: "outbound", message: BUN_CANNOT_SEND });
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
  // The storage's shape, once: the delivery part whole, each capability present whole or absent.
  const shape = storageShapeIssues(outbound.storage, "outbound.storage");
  issues.push(...shape);
  if (shape.length === 0) issues.push(...capabilityIssues(config));
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

/** Options that need a capability the storage lacks. */
function capabilityIssues(config: OutboundConfig): ConfigurationIssue[] {
  const issues: ConfigurationIssue[] = [];
  const { storage } = config;
  if (config.retention !== null && storage.retention === undefined) {
    issues.push({
      path: "outbound.retention",
      message: `needs the storage's retention capability (RetentionStore) to delete history, and ${storage.name} has none: implement it as storage.retention (runStorageConformance checks it) or leave retention out`,
    });
  }
  if (
    (config.limits.maxInFlight !== null || config.limits.rateLimit !== null) &&
    storage.limits === undefined
  ) {
    issues.push({
      path: "outbound.limits",
      message: `needs the storage's limits capability (LimitsStore) to hold limits across workers, and ${storage.name} has none: implement it as storage.limits (runStorageConformance checks it) or leave limits out`,
    });
  }
  return issues;
}
