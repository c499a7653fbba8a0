import type { StorableRetryPolicy } from "../backoff.js";
import type { AutoDisableOptions, CircuitBreakerOptions } from "../config/endpoint-options.js";
import type { Duration } from "../duration.js";
import type { EventFilter } from "../event-filter.js";
import type { EndpointRecord, KeyFailurePolicy, MessageRecord } from "../storage/records.js";

/** The event a user sends. */
export interface SendEvent<TData = unknown> {
  /** Event type, e.g. `order.created` (letters, digits and `_ . : - /`). */
  type: string;
  /** JSON-serialisable payload. */
  data: TData;
  /** Sending twice with the same key enqueues once; the second call returns the first id with `reused: true`. */
  idempotencyKey?: string;
  /** Give up (status `expired`) if not delivered within this long. */
  ttl?: Duration;
  /** Only endpoints of the same tenant receive it. */
  tenantId?: string;
  /**
   * Deliver in order with the other messages of this key: to each endpoint, one at a time, in the
   * order they were sent (their ids), a later one only after the earlier one succeeded, failed for
   * good or dead-lettered. E.g. the id of the object the events are about (`"sub_123"`). 1-255
   * characters. Needs a storage with the `ordering` capability (every storage Postel ships).
   */
  orderingKey?: string;
}

/** What `send()` returns. */
export interface SendResult {
  id: string;
  /** True when `idempotencyKey` matched an earlier message and nothing new was enqueued. */
  reused: boolean;
}

/** An event as filter functions and transforms see it. */
export interface OutboundEvent {
  id: string;
  type: string;
  /** ISO-8601 time the message was sent. */
  timestamp: string;
  data: unknown;
  tenantId: string | null;
}

/** An endpoint as the API returns it (secrets are read with `endpoints.secret(id)`). */
export type Endpoint = Omit<EndpointRecord, "secrets">;

/** A message as the API returns it, with `data` parsed. */
export interface Message extends Omit<MessageRecord, "payload"> {
  data: unknown;
}

/** Options of `endpoints.create`. */
export interface CreateEndpointInput {
  url: string;
  /** A note for people (null: none, and clears it on update). */
  description?: string | null;
  /** Event-type globs; `*` matches any run of characters. Default `["*"]`. */
  types?: string[];
  /** Structural filter on the event, e.g. `{ "data.amount": { $gte: 100 } }` (null: none, and clears it on update). */
  filter?: EventFilter | null;
  /** Name of a function registered in `outbound.filters`. */
  filterFn?: string;
  /** Name of a transform registered in `outbound.transforms`. */
  transform?: string;
  /** Extra request headers (can never override `webhook-*` or `content-type`). */
  headers?: Record<string, string>;
  /**
   * Override the retry policy: an `ExponentialBackoff`/`LinearBackoff` policy (stored with the
   * endpoint), or the name of one in `outbound.retryPolicies` (the way to give an endpoint a `Custom` one).
   */
  retryPolicy?: StorableRetryPolicy | string;
  /** Override the circuit breaker's settings for this endpoint. */
  circuitBreaker?: CircuitBreakerOptions;
  /** Override auto-disable's settings for this endpoint. */
  autoDisable?: AutoDisableOptions;
  /**
   * Most requests in flight to this endpoint at once, across every instance (1 to 10,000).
   * Omitted or null: `outbound.limits.maxInFlight`.
   */
  maxInFlight?: number | null;
  /**
   * Most requests per second to this endpoint, across every instance (0.01 to 100,000; `0.5` = one
   * request every 2 s). Omitted or null: `outbound.limits.rateLimit`.
   */
  rateLimit?: number | null;
  /** Signing secret (`whsec_...` or `whsk_...`); generated when omitted. */
  secret?: string;
  tenantId?: string;
  metadata?: Record<string, unknown>;
  /**
   * When the head of an ordering key (its earliest message not yet delivered) dead-letters or fails
   * for good: `"skip"` (default) moves on to the key's next message; `"hold"` keeps the key's later
   * messages waiting until the head is replayed or skipped (`outbound.orderingKeys.skip`).
   */
  onKeyFailure?: KeyFailurePolicy;
}

/** Options of `endpoints.update`: any field of `create` except `secret` (use `rotateSecret`); `null` resets an override. */
export type UpdateEndpointInput = Partial<
  Omit<CreateEndpointInput, "secret" | "retryPolicy" | "circuitBreaker" | "autoDisable">
> & {
  retryPolicy?: StorableRetryPolicy | string | null;
  circuitBreaker?: CircuitBreakerOptions | null;
  autoDisable?: AutoDisableOptions | null;
};
