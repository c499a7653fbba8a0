import type { InboundSourceOptions } from "@postel/signing/inbound";
import type { RetryPolicy } from "../backoff.js";
import type { Clock } from "../clock.js";
import type { CredentialsOptions } from "../credentials/credentials-options.js";
import type { Duration } from "../duration.js";
import type { AnyEventCatalog } from "../outbound/catalog.js";
import type { Endpoint, OutboundEvent } from "../outbound/types.js";
import type { Random } from "../random.js";
import type { Storage } from "../storage/storage.js";
import type { AutoDisableOptions, CircuitBreakerOptions, EndpointLimitOptions } from "./endpoint-options.js";

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
  /**
   * How often idle workers look for work when nothing wakes them, and busy ones for due retries they
   * cannot know of (another instance's, a crashed one's expired leases). Default `"1s"`.
   */
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

/**
 * `Postel({ telemetry })`: where spans and metrics go. Every field defaults to the global one of
 * `@opentelemetry/api` (what the SDK registered); `telemetry: true` takes all three globals.
 * Described by the methods Postel calls, so these types need no `@opentelemetry/api`.
 */
export interface TelemetryOptions {
  /** Default: `trace.getTracerProvider()`. */
  tracerProvider?: { getTracer(name: string, version?: string): unknown };
  /** Default: `metrics.getMeterProvider()`. */
  meterProvider?: { getMeter(name: string, version?: string): unknown };
  /**
   * Writes the send's trace context into the outbox and `traceparent` into requests (and reads it
   * at the receiving gate). Default: `propagation`, the global propagator (W3C Trace Context with the
   * Node SDK).
   */
  propagator?: {
    inject(context: never, carrier: never, setter: never): void;
    extract(context: never, carrier: never, getter: never): unknown;
  };
}
