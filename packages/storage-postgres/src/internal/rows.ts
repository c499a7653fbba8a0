import type {
  AttemptOutcome,
  AttemptRecord,
  DeliveryRecord,
  DeliveryStatus,
  EndpointRecord,
  EndpointSecret,
  EndpointState,
  MessageRecord,
  MessageStatus,
} from "@postel/core/storage";

/** A raw result row; postgres.js returns `bigint` columns as strings, hence the conversions below. */
export type RawRow = Record<string, unknown>;

const MESSAGE_FIELDS = [
  "id",
  "type",
  "payload",
  "tenant_id",
  "idempotency_key",
  "status",
  "created_at",
  "expires_at",
  "fanned_out_at",
  "finished_at",
  "trace_context",
  "test_endpoint_id",
];

/** Columns of `postel.messages` that make a `MessageRecord`, qualified by `m`. */
export const MESSAGE_COLUMNS = MESSAGE_FIELDS.map((field) => `m.${field}`).join(", ");

/** The same message columns renamed `m_<column>`, so they can sit beside a delivery's in one row. */
export const PREFIXED_MESSAGE_COLUMNS = MESSAGE_FIELDS.map((field) => `m.${field} AS m_${field}`).join(", ");

/** The `m_<column>` names, read back from a CTE or subquery called `alias`, but for those in `omit`. */
export function prefixedMessageColumnsOf(alias: string, omit: readonly string[] = []): string {
  return MESSAGE_FIELDS.filter((field) => !omit.includes(field))
    .map((field) => `${alias}.m_${field}`)
    .join(", ");
}

/** Columns of `postel.deliveries` that make a `DeliveryRecord`, qualified by `d`. */
export const DELIVERY_COLUMNS = `d.id, d.message_id, d.endpoint_id, d.webhook_id, d.status, d.retries_used,
  d.attempts_made, d.next_attempt_at, d.lease_token, d.lease_owner, d.last_error, d.created_at, d.updated_at`;

/** The columns of `postel.deliveries` that keep its first attempt (migration 0007). */
export const FIRST_ATTEMPT_COLUMNS = [
  "first_attempt_id",
  "first_attempt_started_at",
  "first_attempt_latency_ms",
  "first_attempt_outcome",
  "first_attempt_status_code",
  "first_attempt_error_code",
  "first_attempt_error",
  "first_attempt_response_snippet",
] as const;

/** Columns of `postel.endpoints` (qualified by `e`) plus its secrets, newest first, as JSON. */
export const ENDPOINT_COLUMNS = `e.*, COALESCE((
    SELECT jsonb_agg(jsonb_build_object('secret', s.secret, 'createdAt', s.created_at, 'expiresAt', s.expires_at)
      ORDER BY s.seq DESC)
    FROM postel.endpoint_secrets s WHERE s.endpoint_id = e.id
  ), '[]'::jsonb) AS secrets`;

const num = (value: unknown): number => Number(value);
const numOrNull = (value: unknown): number | null => (value === null ? null : Number(value));
const str = (value: unknown): string => value as string;
const strOrNull = (value: unknown): string | null => (value === null ? null : (value as string));

export function toMessage(row: RawRow, prefix = ""): MessageRecord {
  const col = (name: string) => row[prefix + name];
  const message: MessageRecord = {
    id: str(col("id")),
    type: str(col("type")),
    payload: str(col("payload")),
    tenantId: strOrNull(col("tenant_id")),
    idempotencyKey: strOrNull(col("idempotency_key")),
    createdAt: num(col("created_at")),
    expiresAt: numOrNull(col("expires_at")),
    status: col("status") as MessageStatus,
    fannedOutAt: numOrNull(col("fanned_out_at")),
    finishedAt: numOrNull(col("finished_at")),
  };
  const traceContext = col("trace_context");
  if (typeof traceContext === "string") message.traceContext = traceContext;
  const testEndpointId = col("test_endpoint_id");
  if (typeof testEndpointId === "string") message.testEndpointId = testEndpointId;
  return message;
}

export function toDelivery(row: RawRow): DeliveryRecord {
  return {
    id: str(row["id"]),
    messageId: str(row["message_id"]),
    endpointId: str(row["endpoint_id"]),
    webhookId: str(row["webhook_id"]),
    createdAt: num(row["created_at"]),
    status: row["status"] as DeliveryStatus,
    retriesUsed: num(row["retries_used"]),
    attemptsMade: num(row["attempts_made"]),
    nextAttemptAt: num(row["next_attempt_at"]),
    leaseToken: strOrNull(row["lease_token"]),
    leaseOwner: strOrNull(row["lease_owner"]),
    lastError: strOrNull(row["last_error"]),
    updatedAt: num(row["updated_at"]),
  };
}

export function toAttempt(row: RawRow): AttemptRecord {
  return {
    id: str(row["id"]),
    deliveryId: str(row["delivery_id"]),
    messageId: str(row["message_id"]),
    endpointId: str(row["endpoint_id"]),
    webhookId: str(row["webhook_id"]),
    attemptNumber: num(row["attempt_number"]),
    startedAt: num(row["started_at"]),
    latencyMs: num(row["latency_ms"]),
    outcome: row["outcome"] as AttemptOutcome,
    statusCode: numOrNull(row["status_code"]),
    errorCode: strOrNull(row["error_code"]),
    error: strOrNull(row["error"]),
    responseSnippet: strOrNull(row["response_snippet"]),
  };
}

export function toEndpoint(row: RawRow): EndpointRecord {
  return {
    id: str(row["id"]),
    url: str(row["url"]),
    description: strOrNull(row["description"]),
    types: row["types"] as string[],
    filter: row["filter"] as EndpointRecord["filter"],
    filterFn: strOrNull(row["filter_fn"]),
    transform: strOrNull(row["transform"]),
    headers: row["headers"] as Record<string, string>,
    retryPolicy: row["retry_policy"] as EndpointRecord["retryPolicy"],
    circuitBreaker: row["circuit_breaker"] as EndpointRecord["circuitBreaker"],
    autoDisable: row["auto_disable"] as EndpointRecord["autoDisable"],
    maxInFlight: numOrNull(row["max_in_flight"]),
    rateLimit: numOrNull(row["rate_limit"]),
    tenantId: strOrNull(row["tenant_id"]),
    metadata: row["metadata"] as Record<string, unknown>,
    state: row["state"] as EndpointState,
    circuitOpenUntil: numOrNull(row["circuit_open_until"]),
    disabledReason: strOrNull(row["disabled_reason"]),
    createdAt: num(row["created_at"]),
    updatedAt: num(row["updated_at"]),
    secrets: row["secrets"] as EndpointSecret[],
  };
}

/** Timestamps are stored as `bigint`; core may compute fractional ones (jittered delays), so round. */
export function epochMs(value: number): number {
  return Math.round(value);
}

/**
 * JSON text for a `$n::text::json` batch parameter (the cast through text keeps any client config out
 * of it). Batch inputs are read once by `json_to_recordset`, so they stay `json`: `jsonb` would build
 * and key-sort a tree first, which took twice as long and a fifth of the outcome statement.
 */
export function asJson(value: unknown): string {
  return JSON.stringify(value);
}
