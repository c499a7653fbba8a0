import type { RetryPolicy } from "../backoff.js";
import type { Clock } from "../clock.js";
import type { CredentialsConfig } from "../credentials/credentials-api.js";
import type { AnyEventCatalog } from "../outbound/catalog.js";
import type { Endpoint, OutboundEvent } from "../outbound/types.js";
import type { Random } from "../random.js";
import type { AutoDisableSettings, CircuitBreakerSettings } from "../storage/records.js";
import type { Storage } from "../storage/storage.js";
import type { TelemetryOptions } from "./options.js";

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

/** Validated `Postel()` options. */
export interface PostelConfig {
  outbound: OutboundConfig | null;
  clock: Clock;
  random: Random;
  /** Null when telemetry is off. */
  telemetry: TelemetryOptions | null;
}
