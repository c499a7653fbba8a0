import * as v from "valibot";
import { type AnyEventCatalog, isEventCatalog } from "../outbound/catalog.js";
import type { Endpoint, OutboundEvent } from "../outbound/types.js";
import type { Storage } from "../storage/storage.js";
import type { RetentionSettings } from "./resolved.js";
import {
  AutoDisableSchema,
  CircuitBreakerSchema,
  countSchema,
  DEFAULT_PRUNE_BATCH,
  DurationMs,
  isFunction,
  maxInFlightSchema,
  objectNotArray,
  PruneBatchSizeSchema,
  RetryPolicySchema,
  rateLimitSchema,
} from "./schemas.js";

const StorageSchema = v.custom<Storage<unknown>>(
  (x) =>
    typeof x === "object" &&
    x !== null &&
    // Its shape in detail (every verb, every capability) is checked after the parse: storageShapeIssues.
    isFunction((x as Record<string, unknown>)["enqueue"]),
  "must be a Storage (InMemoryStorage(), PostgresStorage(...) or SqliteStorage(...))",
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

/** The `outbound` options of `Postel()`, each checked and each default applied. */
export const OutboundSchema = v.strictObject({
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
            [v.literal("auto"), countSchema("concurrency", 1)],
            'concurrency must be "auto" or an integer >= 1',
          ),
          "auto",
        ),
        maxConcurrency: v.optional(countSchema("maxConcurrency", 1), 1024),
        batchSize: v.optional(countSchema("batchSize", 1), 64),
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
        maxResponseBytes: v.optional(countSchema("maxResponseBytes", 0), 4096),
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
  maxPayloadBytes: v.optional(countSchema("maxPayloadBytes", 1), 256 * 1024),
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
