import { sql } from "drizzle-orm";
import {
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  sqliteView,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

// Timestamps are INTEGER epoch milliseconds handed in by core's clock; no column has a
// time-based default, so SQL never reads the database's clock. JSON is stored as TEXT.

/** The outbox: one row per `send()`. Fan-out leases it with `lease_token` / `lease_until`. */
export const messages = sqliteTable(
  "postel_messages",
  {
    id: text("id").primaryKey(),
    type: text("type").notNull(),
    payload: text("payload").notNull(),
    tenantId: text("tenant_id"),
    idempotencyKey: text("idempotency_key"),
    status: text("status").notNull().default("pending"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at"),
    fannedOutAt: integer("fanned_out_at"),
    finishedAt: integer("finished_at"),
    leaseToken: text("lease_token"),
    leaseOwner: text("lease_owner"),
    leaseUntil: integer("lease_until"),
    // The sender's trace context (JSON of the propagator's fields), written only with telemetry on.
    traceContext: text("trace_context"),
    // Set only on a test event (`endpoints.sendTest()`): fan-out sends it to this one endpoint only.
    testEndpointId: text("test_endpoint_id"),
    // `send({ orderingKey })`: to each endpoint, the messages of one key are delivered one at a time.
    orderingKey: text("ordering_key"),
  },
  (t) => [
    uniqueIndex("postel_messages_idempotency_key")
      .on(t.idempotencyKey)
      .where(sql`idempotency_key IS NOT NULL`),
    // Only messages still waiting for fan-out: stays small however long the history grows.
    index("postel_messages_unfanned").on(t.createdAt, t.id).where(sql`fanned_out_at IS NULL`),
    index("postel_messages_created").on(t.createdAt, t.id),
    index("postel_messages_status_created").on(t.status, t.createdAt),
    // The few messages in a rare final status, in id order: a listing filtered by one reads its page
    // here, never the history (the status_created index would sort all of them). Never written by
    // sending or delivering, only when a message is dead-lettered or expires.
    index("postel_messages_dead_or_expired")
      .on(t.status, t.id)
      .where(sql`status IN ('dead-lettered', 'expired')`),
    // One tenant's messages in id order (the customer portal, messages.list({ tenantId })): never
    // written for a message without a tenant.
    index("postel_messages_tenant").on(t.tenantId, t.id).where(sql`tenant_id IS NOT NULL`),
    // Keyed messages still waiting for fan-out, by key in id order: fan-out records a keyed message only
    // when no earlier one of its key waits here. Never written for an unordered message.
    index("postel_messages_unfanned_key")
      .on(t.orderingKey, t.id)
      .where(sql`ordering_key IS NOT NULL AND fanned_out_at IS NULL AND status = 'pending'`),
  ],
);

/** One row per message × endpoint: the unit of retry state and of leasing. */
export const deliveries = sqliteTable(
  "postel_deliveries",
  {
    id: text("id").primaryKey(),
    messageId: text("message_id")
      .notNull()
      .references(() => messages.id),
    endpointId: text("endpoint_id").notNull(),
    webhookId: text("webhook_id").notNull(),
    status: text("status").notNull().default("pending"),
    retriesUsed: integer("retries_used").notNull().default(0),
    attemptsMade: integer("attempts_made").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    leaseToken: text("lease_token"),
    leaseOwner: text("lease_owner"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    // Its message's ordering key, copied at fan-out (NULL on unordered deliveries).
    orderingKey: text("ordering_key"),
  },
  (t) => [
    // Claiming reads only due pending rows, so it stays flat as terminal history piles up.
    index("postel_deliveries_due").on(t.nextAttemptAt, t.id).where(sql`status = 'pending'`),
    index("postel_deliveries_message").on(t.messageId),
    // Per endpoint: its held or pending work (`claimLimited` counts its live leases and takes its due
    // deliveries here). With next_attempt_at in the key it cost the drain ~9% of its rate on SQLite.
    index("postel_deliveries_endpoint_status").on(t.endpointId, t.status),
    index("postel_deliveries_lease_token").on(t.leaseToken).where(sql`lease_token IS NOT NULL`),
    index("postel_deliveries_dead_letter").on(t.id).where(sql`status = 'dead-lettered'`),
    // Permanent failures, listed beside the dead letters; written only when a delivery fails for good.
    index("postel_deliveries_failed").on(t.id).where(sql`status = 'failed'`),
    // A key's open deliveries on an endpoint (its head, then those waiting by message id): whether it has
    // a head, and which waiting one goes next. Holds only open keyed work, never the terminal history.
    index("postel_deliveries_key_open")
      .on(t.endpointId, t.orderingKey, t.status, t.messageId)
      .where(sql`ordering_key IS NOT NULL AND status IN ('pending', 'held', 'waiting')`),
  ],
);

/** The audit trail: one row per HTTP attempt. */
export const attempts = sqliteTable(
  "postel_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => deliveries.id),
    messageId: text("message_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    webhookId: text("webhook_id").notNull(),
    attemptNumber: integer("attempt_number").notNull(),
    startedAt: integer("started_at").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    outcome: text("outcome").notNull(),
    statusCode: integer("status_code"),
    errorCode: text("error_code"),
    error: text("error"),
    responseSnippet: text("response_snippet"),
  },
  (t) => [index("postel_attempts_message").on(t.messageId, t.startedAt, t.attemptNumber)],
);

/** Endpoints with their state machine; `deleted_at` marks a soft delete. */
export const endpoints = sqliteTable(
  "postel_endpoints",
  {
    id: text("id").primaryKey(),
    url: text("url").notNull(),
    description: text("description"),
    types: text("types").notNull(),
    filter: text("filter"),
    filterFn: text("filter_fn"),
    transform: text("transform"),
    headers: text("headers").notNull(),
    retryPolicy: text("retry_policy"),
    circuitBreaker: text("circuit_breaker"),
    autoDisable: text("auto_disable"),
    /** Most requests in flight at once across every instance; NULL = `outbound.limits`. */
    maxInFlight: integer("max_in_flight"),
    /** Most requests per second across every instance; NULL = `outbound.limits`. */
    rateLimit: real("rate_limit"),
    tenantId: text("tenant_id"),
    metadata: text("metadata").notNull(),
    /** What a key does when its head fails for good: `skip` to its next message, or `hold` it. */
    onKeyFailure: text("on_key_failure").notNull().default("skip"),
    state: text("state").notNull().default("active"),
    circuitOpenUntil: integer("circuit_open_until"),
    disabledReason: text("disabled_reason"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("postel_endpoints_live").on(t.createdAt, t.id).where(sql`deleted_at IS NULL`)],
);

/** Signing secrets; several are valid during a rotation. `seq` orders secrets created in the same ms. */
export const endpointSecrets = sqliteTable(
  "postel_endpoint_secrets",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    endpointId: text("endpoint_id").notNull(),
    secret: text("secret").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at"),
  },
  (t) => [index("postel_endpoint_secrets_endpoint").on(t.endpointId)],
);

/** Attempt and failure counters per endpoint in fixed buckets (`HEALTH_BUCKET_MS`). */
export const endpointHealth = sqliteTable(
  "postel_endpoint_health",
  {
    endpointId: text("endpoint_id").notNull(),
    bucketStart: integer("bucket_start").notNull(),
    attempts: integer("attempts").notNull().default(0),
    failures: integer("failures").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.bucketStart] })],
);

/** Rate-limit buckets of endpoints with a `rateLimit`: tokens left at `refilled_at` (core's `bucketTokens`). */
export const endpointRateBuckets = sqliteTable("postel_endpoint_rate_buckets", {
  endpointId: text("endpoint_id").primaryKey(),
  tokens: real("tokens").notNull(),
  refilledAt: integer("refilled_at").notNull(),
});

/** Inbound dedup: one record per (source, `webhook-id`), kept until `expires_at`. */
export const received = sqliteTable(
  "postel_received",
  {
    source: text("source").notNull(),
    id: text("id").notNull(),
    /** `processing` while a handler runs (until `expires_at`), then `done` until `expires_at`. */
    status: text("status").notNull(),
    receivedAt: integer("received_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.source, t.id] }), index("postel_received_expires").on(t.expiresAt)],
);

/**
 * The audit log (`Storage.auditLog`): who did what to what, when, appended by core and never updated.
 * Listed newest first by id, per tenant on `(tenant_id, id)`; a rate limit counts one tenant's
 * actions since a time on `(tenant_id, action, at)`; pruning takes the oldest on `at`. Retention of
 * the delivery history never touches it. `detail` is JSON text.
 */
export const auditLog = sqliteTable(
  "postel_audit_log",
  {
    id: text("id").primaryKey(),
    at: integer("at").notNull(),
    tenantId: text("tenant_id"),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    source: text("source").notNull(),
    detail: text("detail"),
    // Unique when set: a second entry with the key is not written (one-time link nonces).
    key: text("key"),
  },
  (t) => [
    uniqueIndex("postel_audit_log_key").on(t.key).where(sql`key IS NOT NULL`),
    index("postel_audit_log_tenant").on(t.tenantId, t.id),
    index("postel_audit_log_tenant_action_at").on(t.tenantId, t.action, t.at),
    index("postel_audit_log_at").on(t.at),
  ],
);

/**
 * Ordering keys held on an endpoint (`Storage.ordering`): the key's head dead-lettered or failed for good
 * under `onKeyFailure: "hold"`, so its waiting deliveries stay waiting until the head is replayed or the
 * key skipped. One row per held (endpoint, key); a handful at any time.
 */
export const heldKeys = sqliteTable(
  "postel_held_keys",
  {
    endpointId: text("endpoint_id").notNull(),
    orderingKey: text("ordering_key").notNull(),
    /** The delivery holding the key (its message is never pruned while it does). */
    deliveryId: text("delivery_id").notNull(),
    heldAt: integer("held_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.endpointId, t.orderingKey] }),
    // Replay releases the hold of the deliveries it resets; retention keeps their messages.
    index("postel_held_keys_delivery").on(t.deliveryId),
  ],
);

/** Small key/value facts, e.g. `endpoints_revision`. */
export const meta = sqliteTable("postel_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * Dead-lettered deliveries with their message and endpoint URL, for ops queries
 * (`SELECT * FROM postel_dead_letter`).
 */
export const deadLetter = sqliteView("postel_dead_letter", {
  deliveryId: text("delivery_id").notNull(),
  messageId: text("message_id").notNull(),
  endpointId: text("endpoint_id").notNull(),
  endpointUrl: text("endpoint_url"),
  webhookId: text("webhook_id").notNull(),
  type: text("type").notNull(),
  payload: text("payload").notNull(),
  tenantId: text("tenant_id"),
  retriesUsed: integer("retries_used").notNull(),
  attemptsMade: integer("attempts_made").notNull(),
  lastError: text("last_error"),
  nextAttemptAt: integer("next_attempt_at").notNull(),
  messageCreatedAt: integer("message_created_at").notNull(),
  deliveryCreatedAt: integer("delivery_created_at").notNull(),
  deadLetteredAt: integer("dead_lettered_at").notNull(),
}).as(
  sql`SELECT d.id AS delivery_id, d.message_id, d.endpoint_id, e.url AS endpoint_url, d.webhook_id, m.type, m.payload, m.tenant_id, d.retries_used, d.attempts_made, d.last_error, d.next_attempt_at, m.created_at AS message_created_at, d.created_at AS delivery_created_at, d.updated_at AS dead_lettered_at FROM postel_deliveries d JOIN postel_messages m ON m.id = d.message_id LEFT JOIN postel_endpoints e ON e.id = d.endpoint_id WHERE d.status = 'dead-lettered'`,
);
