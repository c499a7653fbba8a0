import type { Row, Value } from "@libsql/client";
import type {
  AttemptOutcome,
  AttemptRecord,
  ClaimedMessage,
  DeliveryRecord,
  DeliveryStatus,
  EndpointRecord,
  EndpointSecret,
  EndpointState,
  MessageRecord,
  MessageStatus,
} from "@postel/core/storage";

// Rows come back with whatever `intMode` the client was created with (number, bigint or string),
// so integer columns go through Number().

/** The value of `column`, null when absent. */
function get(row: Row, column: string): Value {
  return row[column] ?? null;
}

/** Integer column. */
export function int(row: Row, column: string): number {
  return Number(get(row, column));
}

/** Nullable integer column. */
export function intOrNull(row: Row, column: string): number | null {
  const value = get(row, column);
  return value === null ? null : Number(value);
}

/** Nullable REAL column. */
export function realOrNull(row: Row, column: string): number | null {
  const value = get(row, column);
  return value === null ? null : Number(value);
}

/** Text column. */
export function str(row: Row, column: string): string {
  return String(get(row, column));
}

/** Nullable text column. */
export function strOrNull(row: Row, column: string): string | null {
  const value = get(row, column);
  return value === null ? null : String(value);
}

/** Nullable JSON text column, parsed. */
export function jsonOrNull<T>(row: Row, column: string): T | null {
  const value = strOrNull(row, column);
  return value === null ? null : (JSON.parse(value) as T);
}

/** Code-unit order of ids, as SQLite's BINARY collation sorts them (core's ids sort by creation). */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** JSON text of a value, keeping SQL NULL for null. */
export function toJson(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
}

const MESSAGE_COLUMNS = [
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

/** `m.id AS m_id, …`: the message columns of a join, prefixed so they never clash with a delivery's. */
export const JOINED_MESSAGE_COLUMNS = MESSAGE_COLUMNS.map((column) => `m.${column} AS m_${column}`).join(
  ", ",
);

/** A `postel_messages` row (or its columns under `prefix` in a join). */
export function toMessage(row: Row, prefix = ""): MessageRecord {
  const message: MessageRecord = {
    id: str(row, `${prefix}id`),
    type: str(row, `${prefix}type`),
    payload: str(row, `${prefix}payload`),
    tenantId: strOrNull(row, `${prefix}tenant_id`),
    idempotencyKey: strOrNull(row, `${prefix}idempotency_key`),
    createdAt: int(row, `${prefix}created_at`),
    expiresAt: intOrNull(row, `${prefix}expires_at`),
    status: str(row, `${prefix}status`) as MessageStatus,
    fannedOutAt: intOrNull(row, `${prefix}fanned_out_at`),
    finishedAt: intOrNull(row, `${prefix}finished_at`),
  };
  const traceContext = strOrNull(row, `${prefix}trace_context`);
  if (traceContext !== null) message.traceContext = traceContext;
  const testEndpointId = strOrNull(row, `${prefix}test_endpoint_id`);
  if (testEndpointId !== null) message.testEndpointId = testEndpointId;
  return message;
}

/**
 * SQL expression of a `postel_messages` row and its lease token as one JSON array (`toClaimedMessage`
 * reads it back). One column per row instead of eleven: the driver's per-column decoding costs more
 * than the parse.
 */
export const CLAIMED_MESSAGE_JSON = `json_array(id, type, payload, tenant_id, idempotency_key, status, created_at,
  expires_at, fanned_out_at, finished_at, lease_token, trace_context, test_endpoint_id)`;

/** A message row and its lease token from the JSON array of `CLAIMED_MESSAGE_JSON`. */
export function toClaimedMessage(json: string): ClaimedMessage {
  const [
    id,
    type,
    payload,
    tenantId,
    idempotencyKey,
    status,
    createdAt,
    expiresAt,
    fannedOutAt,
    finishedAt,
    token,
    traceContext,
    testEndpointId,
  ] = JSON.parse(json) as ClaimedMessageColumns;
  const message: MessageRecord = {
    id,
    type,
    payload,
    tenantId,
    idempotencyKey,
    status,
    createdAt,
    expiresAt,
    fannedOutAt,
    finishedAt,
  };
  if (traceContext !== null) message.traceContext = traceContext;
  if (testEndpointId !== null) message.testEndpointId = testEndpointId;
  return { message, token };
}

type ClaimedMessageColumns = [
  id: string,
  type: string,
  payload: string,
  tenantId: string | null,
  idempotencyKey: string | null,
  status: MessageStatus,
  createdAt: number,
  expiresAt: number | null,
  fannedOutAt: number | null,
  finishedAt: number | null,
  token: string,
  traceContext: string | null,
  testEndpointId: string | null,
];

/** A `postel_deliveries` row. */
export function toDelivery(row: Row): DeliveryRecord {
  return {
    id: str(row, "id"),
    messageId: str(row, "message_id"),
    endpointId: str(row, "endpoint_id"),
    webhookId: str(row, "webhook_id"),
    createdAt: int(row, "created_at"),
    status: str(row, "status") as DeliveryStatus,
    retriesUsed: int(row, "retries_used"),
    attemptsMade: int(row, "attempts_made"),
    nextAttemptAt: int(row, "next_attempt_at"),
    leaseToken: strOrNull(row, "lease_token"),
    leaseOwner: strOrNull(row, "lease_owner"),
    lastError: strOrNull(row, "last_error"),
    updatedAt: int(row, "updated_at"),
  };
}

/** A `postel_attempts` row. */
export function toAttempt(row: Row): AttemptRecord {
  return {
    id: str(row, "id"),
    deliveryId: str(row, "delivery_id"),
    messageId: str(row, "message_id"),
    endpointId: str(row, "endpoint_id"),
    webhookId: str(row, "webhook_id"),
    attemptNumber: int(row, "attempt_number"),
    startedAt: int(row, "started_at"),
    latencyMs: int(row, "latency_ms"),
    outcome: str(row, "outcome") as AttemptOutcome,
    statusCode: intOrNull(row, "status_code"),
    errorCode: strOrNull(row, "error_code"),
    error: strOrNull(row, "error"),
    responseSnippet: strOrNull(row, "response_snippet"),
  };
}

/** A `postel_endpoints` row with its `secrets` column (a JSON array built by the query, newest first). */
export function toEndpoint(row: Row): EndpointRecord {
  return {
    id: str(row, "id"),
    url: str(row, "url"),
    description: strOrNull(row, "description"),
    types: jsonOrNull<string[]>(row, "types") ?? [],
    filter: jsonOrNull(row, "filter"),
    filterFn: strOrNull(row, "filter_fn"),
    transform: strOrNull(row, "transform"),
    headers: jsonOrNull(row, "headers") ?? {},
    retryPolicy: jsonOrNull(row, "retry_policy"),
    circuitBreaker: jsonOrNull(row, "circuit_breaker"),
    autoDisable: jsonOrNull(row, "auto_disable"),
    maxInFlight: intOrNull(row, "max_in_flight"),
    rateLimit: realOrNull(row, "rate_limit"),
    tenantId: strOrNull(row, "tenant_id"),
    metadata: jsonOrNull(row, "metadata") ?? {},
    state: str(row, "state") as EndpointState,
    circuitOpenUntil: intOrNull(row, "circuit_open_until"),
    disabledReason: strOrNull(row, "disabled_reason"),
    createdAt: int(row, "created_at"),
    updatedAt: int(row, "updated_at"),
    secrets: jsonOrNull<EndpointSecret[]>(row, "secrets") ?? [],
  };
}
