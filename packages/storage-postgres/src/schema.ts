import { sql } from "drizzle-orm";
import {
  bigint,
  customType,
  doublePrecision,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  uniqueIndex,
  index,
} from "drizzle-orm/pg-core";

// Drizzle table definitions of Postel's schema. drizzle-kit generates migrations/ from this file;
// the storage itself talks SQL through postgres.js, so these exist for users who want to query.
// Every timestamp is epoch milliseconds from core's clock: no column defaults to the database's now().

const ms = (name: string) => bigint(name, { mode: "number" });

// Ids compare in code-unit order (core's ids sort by creation time, like InMemoryStorage's `compare`),
// whatever the database's default collation, so "newest first" listings can walk the primary key.
const idText = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });

// Not exported: `migrate()` creates the schema (and `postel.migrations`) before the first migration
// runs, so the generated SQL must not contain CREATE SCHEMA.
const postelSchema = pgSchema("postel");

/** The outbox: one row per `send()`. `payload` keeps the exact JSON text the caller produced. */
// fillfactor 50 (migration 0006; drizzle does not model it): room on each page for a row's two updates.
export const messages = postelSchema.table(
  "messages",
  {
    id: idText("id").primaryKey(),
    type: text("type").notNull(),
    payload: text("payload").notNull(),
    tenantId: text("tenant_id"),
    idempotencyKey: text("idempotency_key"),
    status: text("status").notNull().default("pending"),
    createdAt: ms("created_at").notNull(),
    expiresAt: ms("expires_at"),
    fannedOutAt: ms("fanned_out_at"),
    finishedAt: ms("finished_at"),
    leaseToken: text("lease_token"),
    leaseOwner: text("lease_owner"),
    leaseUntil: ms("lease_until"),
    // The sender's trace context (JSON of the propagator's fields), written only with telemetry on.
    traceContext: text("trace_context"),
    // Set only on a test event (`endpoints.sendTest()`): fan-out sends it to this one endpoint only.
    testEndpointId: text("test_endpoint_id"),
    // `send({ orderingKey })`: its deliveries to each endpoint are made one at a time, in id order.
    orderingKey: text("ordering_key"),
  },
  (t) => [
    uniqueIndex("messages_idempotency_key_idx")
      .on(t.idempotencyKey)
      .where(sql`${t.idempotencyKey} IS NOT NULL`),
    index("messages_fanout_due_idx")
      .on(t.createdAt, t.id)
      .where(sql`${t.fannedOutAt} IS NULL AND ${t.status} = 'pending'`),
    // Listing messages by a rare final status (the dashboard, messages.list): the primary key would be
    // walked through the whole history to fill a page. Only dead-lettered and expired rows have an
    // entry, so sending and delivering never write it (a status change is never a HOT update anyway:
    // messages_fanout_due_idx's predicate reads status).
    index("messages_dead_or_expired_idx")
      .on(t.status, t.id)
      .where(sql`${t.status} IN ('dead-lettered', 'expired')`),
    // One tenant's messages newest first (the customer portal, messages.list({ tenantId })): a
    // tenant among thousands would otherwise be searched window by window through everyone's
    // history. Messages without a tenant have no entry, and tenant_id and id never change, so an
    // app without tenants writes nothing more and lease updates stay HOT.
    index("messages_tenant_idx").on(t.tenantId, t.id).where(sql`${t.tenantId} IS NOT NULL`),
    // A keyed message's earlier messages of its key still awaiting fan-out (recordFanout's order check).
    // Unordered messages have no entry, so sending them writes nothing more.
    index("messages_unfanned_key_idx")
      .on(t.orderingKey, t.id)
      .where(sql`${t.orderingKey} IS NOT NULL AND ${t.fannedOutAt} IS NULL AND ${t.status} = 'pending'`),
    // A key's messages fanned out and not finished yet: while it has one, a new message of the key is
    // not clear to go straight from the outbox (ORDERING_RULES.directHead). Keyed messages only.
    index("messages_open_key_idx")
      .on(t.orderingKey)
      .where(sql`${t.orderingKey} IS NOT NULL AND ${t.fannedOutAt} IS NOT NULL AND ${t.status} = 'pending'`),
  ],
);

/**
 * One row per message × endpoint: the unit of retry state and of leasing. `message_id` has no foreign
 * key, like `attempts.message_id`: Postel inserts a delivery only in the statement that fences its
 * message, and the per-row check cost a fifth of the outcome statement. To prune history, delete a
 * message's attempts, deliveries and the message together.
 */
export const deliveries = postelSchema.table(
  "deliveries",
  {
    id: idText("id").primaryKey(),
    messageId: idText("message_id").notNull(),
    endpointId: idText("endpoint_id").notNull(),
    webhookId: text("webhook_id").notNull(),
    status: text("status").notNull(),
    retriesUsed: integer("retries_used").notNull().default(0),
    attemptsMade: integer("attempts_made").notNull().default(0),
    nextAttemptAt: ms("next_attempt_at").notNull(),
    leaseToken: text("lease_token"),
    leaseOwner: text("lease_owner"),
    lastError: text("last_error"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
    // The delivery's first attempt (attempt number 1, under the delivery's `webhook_id`), kept in its
    // row rather than in `attempts`: most deliveries succeed the first time, and a row in `attempts`
    // with its two index entries was a quarter of the WAL of a delivery (migration 0007). NULL until
    // attempted; `all_attempts` reads both places.
    firstAttemptId: idText("first_attempt_id"),
    firstAttemptStartedAt: ms("first_attempt_started_at"),
    firstAttemptLatencyMs: integer("first_attempt_latency_ms"),
    firstAttemptOutcome: text("first_attempt_outcome"),
    firstAttemptStatusCode: integer("first_attempt_status_code"),
    firstAttemptErrorCode: text("first_attempt_error_code"),
    firstAttemptError: text("first_attempt_error"),
    firstAttemptResponseSnippet: text("first_attempt_response_snippet"),
    // Its message's ordering key, copied at fan-out (NULL on unordered deliveries).
    orderingKey: text("ordering_key"),
  },
  (t) => [
    index("deliveries_due_idx").on(t.nextAttemptAt, t.id).where(sql`${t.status} = 'pending'`),
    index("deliveries_message_id_idx").on(t.messageId),
    // Per endpoint: its held or pending work, and (by next_attempt_at) what is due and what is leased
    // (`claimLimited` counts an endpoint's live leases and takes its earliest due deliveries here).
    index("deliveries_endpoint_due_idx").on(t.endpointId, t.status, t.nextAttemptAt),
    index("deliveries_dead_lettered_idx").on(t.id).where(sql`${t.status} = 'dead-lettered'`),
    // Permanent failures, listed beside the dead letters. Written only when a delivery fails for good,
    // never on the path of a delivery that succeeds.
    index("deliveries_failed_idx").on(t.id).where(sql`${t.status} = 'failed'`),
    // First attempts of deliveries still open (pending or held) after it failed: `attemptsAfter` finds
    // them by id here. A delivery that succeeds first time is never in it.
    index("deliveries_first_attempt_open_idx")
      .on(t.firstAttemptId)
      .where(sql`${t.status} IN ('pending', 'held') AND ${t.firstAttemptId} IS NOT NULL`),
    // A key's open deliveries on an endpoint: its head (pending or held) and those waiting behind it,
    // by message id. Unordered deliveries never have an entry, so their statements write nothing more.
    // Keyed by one expression of the pair (see KEY_PAIR in src/ordering/key-pair.ts), which no other
    // index serves: with two columns, a generic plan made on an unanalysed table chose
    // deliveries_endpoint_due_idx by endpoint_id and read the endpoint's every delivery per probe.
    index("deliveries_key_open_idx")
      .on(sql`((${t.endpointId} || ' ' || ${t.orderingKey}) COLLATE "C")`, t.status, t.messageId)
      .where(sql`${t.orderingKey} IS NOT NULL AND ${t.status} IN ('pending', 'held', 'waiting')`),
  ],
);

/**
 * The audit trail's later attempts: one row per HTTP attempt after a delivery's first, which is kept
 * in the delivery's row (`first_attempt_*`). Query {@link allAttempts} for every attempt. Rows written
 * before migration 0007 hold first attempts too.
 */
export const attempts = postelSchema.table(
  "attempts",
  {
    id: idText("id").primaryKey(),
    deliveryId: idText("delivery_id").notNull(),
    messageId: idText("message_id").notNull(),
    endpointId: idText("endpoint_id").notNull(),
    webhookId: text("webhook_id").notNull(),
    attemptNumber: integer("attempt_number").notNull(),
    startedAt: ms("started_at").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    outcome: text("outcome").notNull(),
    statusCode: integer("status_code"),
    errorCode: text("error_code"),
    error: text("error"),
    responseSnippet: text("response_snippet"),
  },
  (t) => [index("attempts_message_id_idx").on(t.messageId)],
);

/** Endpoints, soft-deleted (`deleted_at`) so their history stays readable. */
export const endpoints = postelSchema.table("endpoints", {
  id: idText("id").primaryKey(),
  url: text("url").notNull(),
  description: text("description"),
  types: jsonb("types").notNull(),
  filter: jsonb("filter"),
  filterFn: text("filter_fn"),
  transform: text("transform"),
  headers: jsonb("headers").notNull(),
  retryPolicy: jsonb("retry_policy"),
  circuitBreaker: jsonb("circuit_breaker"),
  autoDisable: jsonb("auto_disable"),
  /** Most requests in flight at once across every instance; NULL = `outbound.limits`. */
  maxInFlight: integer("max_in_flight"),
  /** Most requests per second across every instance; NULL = `outbound.limits`. */
  rateLimit: doublePrecision("rate_limit"),
  tenantId: text("tenant_id"),
  metadata: jsonb("metadata").notNull(),
  /** What a key does when its head dead-letters or fails for good: `skip` or `hold`. */
  onKeyFailure: text("on_key_failure").notNull().default("skip"),
  state: text("state").notNull(),
  circuitOpenUntil: ms("circuit_open_until"),
  disabledReason: text("disabled_reason"),
  createdAt: ms("created_at").notNull(),
  updatedAt: ms("updated_at").notNull(),
  deletedAt: ms("deleted_at"),
});

/**
 * Keys held on an endpoint (`Storage.ordering`): the key's head dead-lettered or failed for good under
 * `onKeyFailure: "hold"`, so its later deliveries wait until the head is replayed or the key skipped.
 */
export const heldKeys = postelSchema.table(
  "held_keys",
  {
    endpointId: idText("endpoint_id").notNull(),
    // In code-unit order too: listHeldKeys pages through the primary key by endpoint, then key.
    orderingKey: idText("ordering_key").notNull(),
    // The delivery holding the key.
    deliveryId: idText("delivery_id").notNull(),
    heldAt: ms("held_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.endpointId, t.orderingKey] }),
    // Whether a key is held on any endpoint (ORDERING_RULES.directHead).
    index("held_keys_key_idx").on(t.orderingKey),
  ],
);

/** Signing secrets of an endpoint; several are valid at once during a rotation. */
export const endpointSecrets = postelSchema.table(
  "endpoint_secrets",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    endpointId: idText("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    secret: text("secret").notNull(),
    createdAt: ms("created_at").notNull(),
    expiresAt: ms("expires_at"),
  },
  (t) => [index("endpoint_secrets_endpoint_id_idx").on(t.endpointId)],
);

/** Attempt and failure counters per endpoint in fixed buckets (`HEALTH_BUCKET_MS`). */
export const endpointHealth = postelSchema.table(
  "endpoint_health",
  {
    endpointId: idText("endpoint_id").notNull(),
    bucketStart: ms("bucket_start").notNull(),
    attempts: integer("attempts").notNull(),
    failures: integer("failures").notNull(),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.bucketStart] })],
);

/**
 * Rate-limit buckets of endpoints with a `rateLimit`: the tokens left at `refilled_at` (see core's
 * `bucketTokens`). Written only by `claimLimited`, under the endpoint's claim lock.
 */
export const endpointRateBuckets = postelSchema.table("endpoint_rate_buckets", {
  endpointId: idText("endpoint_id").primaryKey(),
  tokens: doublePrecision("tokens").notNull(),
  refilledAt: ms("refilled_at").notNull(),
});

/** Inbound deduplication: `webhook-id`s already handled, until they expire. */
export const received = postelSchema.table(
  "received",
  {
    source: text("source").notNull(),
    id: idText("id").notNull(),
    /** `processing` while a handler runs (until `expires_at`), then `done` until `expires_at`. */
    status: text("status").notNull(),
    receivedAt: ms("received_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.source, t.id] }), index("received_expires_at_idx").on(t.expiresAt)],
);

/**
 * The audit log (`Storage.auditLog`): who did what to what, when, appended by core and never updated.
 * Listed newest first by id, per tenant on `(tenant_id, id)`; a rate limit counts one tenant's
 * actions since a time on `(tenant_id, action, at)`; pruning takes the oldest on `at`. Retention of
 * the delivery history never touches it.
 */
export const auditLog = postelSchema.table(
  "audit_log",
  {
    id: idText("id").primaryKey(),
    at: ms("at").notNull(),
    tenantId: text("tenant_id"),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    source: text("source").notNull(),
    detail: jsonb("detail"),
    // Unique when set: a second entry with the key is not written (one-time link nonces).
    key: text("key"),
  },
  (t) => [
    uniqueIndex("audit_log_key_idx").on(t.key).where(sql`${t.key} IS NOT NULL`),
    index("audit_log_tenant_id_idx").on(t.tenantId, t.id),
    index("audit_log_tenant_action_at_idx").on(t.tenantId, t.action, t.at),
    index("audit_log_at_idx").on(t.at),
  ],
);

/** Small counters: `schema_version`, `endpoints_revision`. */
export const meta = postelSchema.table("meta", {
  key: text("key").primaryKey(),
  value: bigint("value", { mode: "number" }).notNull(),
});

/** Dead-lettered deliveries joined with their message and endpoint url, for ops queries. */
export const deadLetter = postelSchema
  .view("dead_letter", {
    deliveryId: idText("delivery_id").notNull(),
    messageId: idText("message_id").notNull(),
    endpointId: idText("endpoint_id").notNull(),
    endpointUrl: text("endpoint_url"),
    webhookId: text("webhook_id").notNull(),
    eventType: text("event_type").notNull(),
    payload: text("payload").notNull(),
    tenantId: text("tenant_id"),
    retriesUsed: integer("retries_used").notNull(),
    attemptsMade: integer("attempts_made").notNull(),
    lastError: text("last_error"),
    messageCreatedAt: ms("message_created_at").notNull(),
    deadLetteredAt: ms("dead_lettered_at").notNull(),
  })
  .existing();

/**
 * Every HTTP attempt, wherever it is kept: deliveries' first attempts (`first_attempt_*`) and the rows
 * of `attempts`. The audit trail to query; filter by `message_id` or `delivery_id` to use an index.
 */
export const allAttempts = postelSchema
  .view("all_attempts", {
    id: idText("id").notNull(),
    deliveryId: idText("delivery_id").notNull(),
    messageId: idText("message_id").notNull(),
    endpointId: idText("endpoint_id").notNull(),
    webhookId: text("webhook_id").notNull(),
    attemptNumber: integer("attempt_number").notNull(),
    startedAt: ms("started_at").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    outcome: text("outcome").notNull(),
    statusCode: integer("status_code"),
    errorCode: text("error_code"),
    error: text("error"),
    responseSnippet: text("response_snippet"),
  })
  .existing();
