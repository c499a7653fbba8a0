/**
 * The rows Postel persists. Every timestamp is epoch milliseconds taken from core's `Clock`;
 * storage never reads the database's clock.
 */

/** Outbox-level lifecycle of a message (see DESIGN.md §3 "Lifecycle"). */
export type MessageStatus = "pending" | "dispatched" | "dead-lettered" | "expired";

/**
 * Lifecycle of one delivery (message × endpoint). `pending` is due, scheduled or leased, `held` is
 * parked because its endpoint is disabled, `waiting` is queued behind an earlier delivery of its
 * ordering key to the same endpoint (it becomes `pending` when that one ends); the rest are terminal.
 */
export type DeliveryStatus =
  | "pending"
  | "held"
  | "waiting"
  | "succeeded"
  | "failed"
  | "dead-lettered"
  | "expired"
  | "cancelled";

/** Delivery statuses after which nothing more happens unless the delivery is replayed. */
export const TERMINAL_DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  "succeeded",
  "failed",
  "dead-lettered",
  "expired",
  "cancelled",
];

/** Endpoint states of the seed's state machine. */
export type EndpointState = "active" | "circuit-open" | "disabled";

/** A message as written by `send()`; `payload` is the JSON text of `data`. */
export interface NewMessage {
  id: string;
  type: string;
  payload: string;
  tenantId: string | null;
  idempotencyKey: string | null;
  createdAt: number;
  /** When the message expires if not yet delivered (`createdAt + ttl`), or null for never. */
  expiresAt: number | null;
  /**
   * The sender's trace context, as the JSON of the propagator's fields (W3C:
   * `{"traceparent":"00-…","tracestate":"…"}`): written by `send()` only when telemetry is on and a
   * span is active, absent otherwise. Each attempt's span links to it.
   */
  traceContext?: string;
  /**
   * Set only on a test event (`endpoints.sendTest`): the one endpoint it goes to, whatever the
   * types, tenant and filters of any endpoint. Absent on every other message.
   */
  testEndpointId?: string;
  /**
   * The message's ordering key (`send({ orderingKey })`): to each endpoint, the deliveries of
   * messages that share it are made one at a time, in message id order (see `ORDERING_RULES`).
   * Absent on unordered messages.
   */
  orderingKey?: string;
}

/** A message row. */
export interface MessageRecord extends NewMessage {
  status: MessageStatus;
  /** When a worker resolved its endpoints and created its deliveries; null before that. */
  fannedOutAt: number | null;
  /** When it reached a terminal status; null while pending. */
  finishedAt: number | null;
}

/** A message leased for fan-out; `token` fences `recordFanout`. */
export interface ClaimedMessage {
  message: MessageRecord;
  token: string;
  /**
   * A keyed message whose key had nothing in flight or queued when it was claimed
   * (`ORDERING_RULES.directHead`): it may be delivered straight from its lease.
   */
  clear?: true;
}

/** One delivery to create during fan-out. */
export interface NewDelivery {
  id: string;
  messageId: string;
  endpointId: string;
  /** The `webhook-id` the receiver sees; stable across retries. */
  webhookId: string;
  createdAt: number;
  /** Its message's ordering key, copied at fan-out; absent on unordered deliveries. */
  orderingKey?: string;
}

/** A delivery row (message × endpoint): the unit of retry state. */
export interface DeliveryRecord extends NewDelivery {
  status: DeliveryStatus;
  /** Retries consumed so far (the initial attempt is not a retry). */
  retriesUsed: number;
  /** HTTP attempts made so far, retries included. */
  attemptsMade: number;
  /** When it is next due. While leased, this is the lease expiry (an expired lease is simply due). */
  nextAttemptAt: number;
  /** Fencing token of the current lease, null when not leased. */
  leaseToken: string | null;
  leaseOwner: string | null;
  /** Short description of the last failure, for dashboards. */
  lastError: string | null;
  updatedAt: number;
}

/**
 * A new delivery's row: `pending`, nothing attempted, due at `dueAt`, leased when `lease` is given.
 * (InMemoryStorage inserts these; workers hold a direct delivery as one before its row exists.)
 */
export function pendingDelivery(
  fresh: NewDelivery,
  now: number,
  dueAt: number,
  lease: { token: string; owner: string } | null = null,
): DeliveryRecord {
  const record: DeliveryRecord = {
    id: fresh.id,
    messageId: fresh.messageId,
    endpointId: fresh.endpointId,
    webhookId: fresh.webhookId,
    createdAt: fresh.createdAt,
    status: "pending",
    retriesUsed: 0,
    attemptsMade: 0,
    nextAttemptAt: dueAt,
    leaseToken: lease?.token ?? null,
    leaseOwner: lease?.owner ?? null,
    lastError: null,
    updatedAt: now,
  };
  if (fresh.orderingKey !== undefined) record.orderingKey = fresh.orderingKey;
  return record;
}

/** A delivery leased to a worker together with its message (one round trip). */
export interface ClaimedDelivery {
  delivery: DeliveryRecord;
  message: MessageRecord;
  leaseToken: string;
  /**
   * True when the delivery's row does not exist yet: its message matched exactly one endpoint, so
   * the worker delivers straight from the leased message (`leaseToken` is the message's fan-out
   * token) and `recordOutcomes` inserts the row together with its first outcome.
   */
  direct?: boolean;
}

/**
 * A dead-lettered delivery (a row of the `dead_letter` view) with what an operator needs to decide on
 * a replay.
 */
export interface DeadLetter {
  /** `dead-lettered` (retries used up) or `failed` (a permanent failure). */
  status: "dead-lettered" | "failed";
  deliveryId: string;
  messageId: string;
  endpointId: string;
  /** The `webhook-id` its receiver saw (a replay keeps it unless `freshWebhookId`). */
  webhookId: string;
  /** The message's event type. */
  type: string;
  /** The message's tenant. */
  tenantId: string | null;
  attemptsMade: number;
  lastError: string | null;
  /** When the message was created. */
  createdAt: number;
  /** When the delivery was dead-lettered or failed (its `updatedAt`). */
  deadLetteredAt: number;
}

/** Outcome class of one HTTP attempt. */
export type AttemptOutcome = "success" | "retryable" | "permanent";

/** One HTTP attempt, as recorded in the audit trail. */
export interface AttemptRecord {
  id: string;
  deliveryId: string;
  messageId: string;
  endpointId: string;
  webhookId: string;
  /** 1 for the initial attempt, 2 for the first retry, ... */
  attemptNumber: number;
  startedAt: number;
  latencyMs: number;
  outcome: AttemptOutcome;
  /** HTTP status, or null when no response arrived. */
  statusCode: number | null;
  /** `TIMEOUT`, `CONNECTION_REFUSED`, ... when no response arrived. */
  errorCode: string | null;
  /** Human-readable reason (`HTTP 500`, `timeout after 15s`). */
  error: string | null;
  /** The first bytes of the response body (bounded). */
  responseSnippet: string | null;
}

/** One signing secret of an endpoint. Several are valid at once during a rotation. */
export interface EndpointSecret {
  secret: string;
  createdAt: number;
  /** After this time the secret no longer signs; null = no expiry. */
  expiresAt: number | null;
}

/** Persisted circuit-breaker settings of an endpoint (milliseconds). */
export interface CircuitBreakerSettings {
  threshold: number;
  cooldownMs: number;
  windowMs: number;
  minimumVolume: number;
}

/** Persisted auto-disable settings of an endpoint (milliseconds). */
export interface AutoDisableSettings {
  failureRate: number;
  windowMs: number;
  minAttempts: number;
}

/** Serializable description of a retry policy, so per-endpoint overrides survive restarts. */
export type RetryPolicySpec =
  | { kind: "exponential"; schedule: number[]; maxAttempts: number; jitter: number }
  | { kind: "linear"; stepMs: number; maxAttempts: number; jitter: number }
  | { kind: "named"; name: string };

/** The fields of an endpoint a user can set. JSON-serialisable by construction. */
export interface EndpointFields {
  url: string;
  description: string | null;
  /** Event-type globs; `*` matches any run of characters. */
  types: string[];
  /** Structural filter (see `EventFilter`), or null. */
  filter: Record<string, unknown> | null;
  /** Name of a filter function registered in `outbound.filters`, or null. */
  filterFn: string | null;
  /** Name of a transform registered in `outbound.transforms`, or null. */
  transform: string | null;
  headers: Record<string, string>;
  retryPolicy: RetryPolicySpec | null;
  circuitBreaker: CircuitBreakerSettings | null;
  autoDisable: AutoDisableSettings | null;
  /** Most requests in flight to this endpoint at once, across every instance; null = the global default. */
  maxInFlight: number | null;
  /** Most requests per second to this endpoint, across every instance (fractions allowed); null = the global default. */
  rateLimit: number | null;
  tenantId: string | null;
  metadata: Record<string, unknown>;
  /**
   * What an ordering key does when its head (its earliest delivery not yet done) dead-letters or fails
   * for good: `skip` moves on to the key's next message; `hold` keeps the key's later messages waiting
   * until the head is replayed or an operator skips it.
   */
  onKeyFailure: KeyFailurePolicy;
}

/** An endpoint's head-of-line policy for ordering keys (`EndpointFields.onKeyFailure`). */
export type KeyFailurePolicy = "skip" | "hold";

/** An endpoint row with its state machine fields and current secrets. */
export interface EndpointRecord extends EndpointFields {
  id: string;
  state: EndpointState;
  /** While `circuit-open`: when the next probe may run. */
  circuitOpenUntil: number | null;
  /** Why it was disabled (auto-disable reason or "manual"). */
  disabledReason: string | null;
  createdAt: number;
  updatedAt: number;
  /** Newest first. */
  secrets: EndpointSecret[];
}

/** Attempts and failures of one endpoint over a window. */
export interface HealthStats {
  attempts: number;
  failures: number;
}
