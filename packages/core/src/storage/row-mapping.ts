import type { AuditLogRecord } from "./audit-log-store.js";
import type { AttemptRecord, DeliveryRecord, EndpointRecord, MessageRecord } from "./records.js";

// One table per record: which column each field is read from, and how. The SQL storages name their
// columns alike, so both build their row mappers (and the column lists of their SELECTs) from these
// tables; only how a driver returns a value differs, and each storage says that in a `ColumnReader`.

/**
 * How a column's value becomes a record field:
 * - `text`: a string; `nullable-text`: a string or null;
 * - `optional-text`: a string, or the field left out of the record when the column is not a string;
 * - `number` / `nullable-number`: an integer (epoch ms, a count) or a real, which a driver may
 *   return as a number, a bigint or a string;
 * - `json` / `nullable-json`: a JSON value, parsed by the driver (Postgres `jsonb`) or from JSON text.
 */
export type ColumnKind =
  | "text"
  | "nullable-text"
  | "optional-text"
  | "number"
  | "nullable-number"
  | "json"
  | "nullable-json";

/** The kind a field of type `T` is read as (optional fields are `optional-text`, see `RowTable`). */
type KindOf<T> = [T] extends [string]
  ? "text"
  : [T] extends [string | null]
    ? "nullable-text"
    : [T] extends [number]
      ? "number"
      : [T] extends [number | null]
        ? "nullable-number"
        : [null] extends [T]
          ? "nullable-json"
          : "json";

/** One field of a `RowTable`: its column and the kind of its value. */
export interface ColumnMapping<K extends ColumnKind = ColumnKind> {
  readonly column: string;
  readonly kind: K;
}

/**
 * Every field of record `R` with its column and kind. Its order is the order of the record's keys
 * (as the storages built them before, so records serialise as they did) and of `columnsOf`. The kind
 * is checked against the field's type: a `number | null` field must be `nullable-number`, an optional
 * string field `optional-text`, and so on.
 */
export type RowTable<R> = {
  readonly [K in keyof R]-?: ColumnMapping<undefined extends R[K] ? "optional-text" : KindOf<R[K]>>;
};

/**
 * How a storage's driver returns a column's value that is not null. postgres.js returns `bigint`
 * columns as strings and `jsonb` parsed; libsql returns integers as a number, bigint or string (by
 * its `intMode`) and JSON as text.
 */
export interface ColumnReader {
  /** A `text` column's value as a string. */
  text(value: unknown): string;
  /** An integer or real column's value as a number. */
  number(value: unknown): number;
  /** A JSON column's value, parsed. */
  json(value: unknown): unknown;
}

/** `postel.messages` / `postel_messages` as a `MessageRecord`. */
export const MESSAGE_ROW: RowTable<MessageRecord> = {
  id: { column: "id", kind: "text" },
  type: { column: "type", kind: "text" },
  payload: { column: "payload", kind: "text" },
  tenantId: { column: "tenant_id", kind: "nullable-text" },
  idempotencyKey: { column: "idempotency_key", kind: "nullable-text" },
  createdAt: { column: "created_at", kind: "number" },
  expiresAt: { column: "expires_at", kind: "nullable-number" },
  status: { column: "status", kind: "text" },
  fannedOutAt: { column: "fanned_out_at", kind: "nullable-number" },
  finishedAt: { column: "finished_at", kind: "nullable-number" },
  traceContext: { column: "trace_context", kind: "optional-text" },
  testEndpointId: { column: "test_endpoint_id", kind: "optional-text" },
  orderingKey: { column: "ordering_key", kind: "optional-text" },
};

/** `postel.deliveries` / `postel_deliveries` as a `DeliveryRecord`. */
export const DELIVERY_ROW: RowTable<DeliveryRecord> = {
  id: { column: "id", kind: "text" },
  messageId: { column: "message_id", kind: "text" },
  endpointId: { column: "endpoint_id", kind: "text" },
  webhookId: { column: "webhook_id", kind: "text" },
  createdAt: { column: "created_at", kind: "number" },
  status: { column: "status", kind: "text" },
  retriesUsed: { column: "retries_used", kind: "number" },
  attemptsMade: { column: "attempts_made", kind: "number" },
  nextAttemptAt: { column: "next_attempt_at", kind: "number" },
  leaseToken: { column: "lease_token", kind: "nullable-text" },
  leaseOwner: { column: "lease_owner", kind: "nullable-text" },
  lastError: { column: "last_error", kind: "nullable-text" },
  updatedAt: { column: "updated_at", kind: "number" },
  orderingKey: { column: "ordering_key", kind: "optional-text" },
};

/** `postel.all_attempts` / `postel_attempts` as an `AttemptRecord`. */
export const ATTEMPT_ROW: RowTable<AttemptRecord> = {
  id: { column: "id", kind: "text" },
  deliveryId: { column: "delivery_id", kind: "text" },
  messageId: { column: "message_id", kind: "text" },
  endpointId: { column: "endpoint_id", kind: "text" },
  webhookId: { column: "webhook_id", kind: "text" },
  attemptNumber: { column: "attempt_number", kind: "number" },
  startedAt: { column: "started_at", kind: "number" },
  latencyMs: { column: "latency_ms", kind: "number" },
  outcome: { column: "outcome", kind: "text" },
  statusCode: { column: "status_code", kind: "nullable-number" },
  errorCode: { column: "error_code", kind: "nullable-text" },
  error: { column: "error", kind: "nullable-text" },
  responseSnippet: { column: "response_snippet", kind: "nullable-text" },
};

/**
 * `postel.endpoints` / `postel_endpoints` as an `EndpointRecord`, with `secrets`: a column the query
 * builds (the endpoint's secrets as a JSON array, newest first).
 */
export const ENDPOINT_ROW: RowTable<EndpointRecord> = {
  id: { column: "id", kind: "text" },
  url: { column: "url", kind: "text" },
  description: { column: "description", kind: "nullable-text" },
  types: { column: "types", kind: "json" },
  filter: { column: "filter", kind: "nullable-json" },
  filterFn: { column: "filter_fn", kind: "nullable-text" },
  transform: { column: "transform", kind: "nullable-text" },
  headers: { column: "headers", kind: "json" },
  retryPolicy: { column: "retry_policy", kind: "nullable-json" },
  circuitBreaker: { column: "circuit_breaker", kind: "nullable-json" },
  autoDisable: { column: "auto_disable", kind: "nullable-json" },
  maxInFlight: { column: "max_in_flight", kind: "nullable-number" },
  rateLimit: { column: "rate_limit", kind: "nullable-number" },
  tenantId: { column: "tenant_id", kind: "nullable-text" },
  metadata: { column: "metadata", kind: "json" },
  onKeyFailure: { column: "on_key_failure", kind: "text" },
  state: { column: "state", kind: "text" },
  circuitOpenUntil: { column: "circuit_open_until", kind: "nullable-number" },
  disabledReason: { column: "disabled_reason", kind: "nullable-text" },
  createdAt: { column: "created_at", kind: "number" },
  updatedAt: { column: "updated_at", kind: "number" },
  secrets: { column: "secrets", kind: "json" },
};

/** `postel.audit_log` / `postel_audit_log` as an `AuditLogRecord`. */
export const AUDIT_ENTRY_ROW: RowTable<AuditLogRecord> = {
  id: { column: "id", kind: "text" },
  at: { column: "at", kind: "number" },
  tenantId: { column: "tenant_id", kind: "nullable-text" },
  actor: { column: "actor", kind: "text" },
  action: { column: "action", kind: "text" },
  target: { column: "target", kind: "nullable-text" },
  source: { column: "source", kind: "text" },
  detail: { column: "detail", kind: "nullable-json" },
  key: { column: "key", kind: "nullable-text" },
};

/** The table's column names, in its order: for the column list of a SELECT. */
export function columnsOf<R>(table: RowTable<R>): string[] {
  return Object.values<ColumnMapping>(table).map((mapping) => mapping.column);
}

/**
 * A mapper from a result row holding the table's columns, each named `prefix + column` (a prefix
 * keeps a joined row's message columns apart from its delivery's), to the record.
 * Build it once, at module load: it runs for every row read.
 * @example
 * const reader = { text: String, number: Number, json: (v: unknown) => JSON.parse(String(v)) };
 * const toMessage = rowMapper(MESSAGE_ROW, reader);
 * const message = toMessage(row);
 */
export function rowMapper<R>(
  table: RowTable<R>,
  reader: ColumnReader,
  prefix = "",
): (row: Readonly<Record<string, unknown>>) => R {
  return compile(table, reader, (column) => prefix + column);
}

/**
 * A mapper from an array of the table's columns in the table's order (as `columnsOf` lists them), e.g.
 * a row selected as one `json_array(…)` and parsed, to the record. Build it once, at module load.
 */
export function arrayMapper<R>(table: RowTable<R>, reader: ColumnReader): (values: readonly unknown[]) => R {
  return compile(table, reader, (_, index) => index);
}

// Kinds as small integers, so that the per-row loop switches on numbers.
const TEXT = 0;
const NULLABLE_TEXT = 1;
const OPTIONAL_TEXT = 2;
const NUMBER = 3;
const NULLABLE_NUMBER = 4;
const JSON_VALUE = 5;
const NULLABLE_JSON = 6;
const KIND_CODE: Record<ColumnKind, number> = {
  text: TEXT,
  "nullable-text": NULLABLE_TEXT,
  "optional-text": OPTIONAL_TEXT,
  number: NUMBER,
  "nullable-number": NULLABLE_NUMBER,
  json: JSON_VALUE,
  "nullable-json": NULLABLE_JSON,
};

/**
 * The mapper of a table: its fields, keys and kinds precomputed in arrays once, then one loop per row
 * (no per-row closures, spreads or key concatenation). A loop rather than a function generated from
 * source, so it runs where code generation is disallowed; measured at about a third of the time of the
 * hand-written mappers it replaced (whose `prefix + column` built a string per column and row).
 */
function compile<R, Key extends string | number>(
  table: RowTable<R>,
  reader: ColumnReader,
  keyOf: (column: string, index: number) => Key,
): (row: Readonly<Record<Key, unknown>>) => R {
  const entries = Object.entries<ColumnMapping>(table);
  const fields = entries.map(([field]) => field);
  const keys = entries.map(([, mapping], index) => keyOf(mapping.column, index));
  const kinds = entries.map(([, mapping]) => KIND_CODE[mapping.kind]);
  const count = entries.length;
  const { text, number, json } = reader;
  return (row) => {
    const record: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const value = row[keys[i] as Key];
      const field = fields[i] as string;
      switch (kinds[i]) {
        case TEXT:
          record[field] = text(value);
          break;
        case NULLABLE_TEXT:
          record[field] = value === null || value === undefined ? null : text(value);
          break;
        case OPTIONAL_TEXT:
          if (typeof value === "string") record[field] = value;
          break;
        case NUMBER:
          record[field] = number(value);
          break;
        case NULLABLE_NUMBER:
          record[field] = value === null || value === undefined ? null : number(value);
          break;
        case JSON_VALUE:
          record[field] = json(value);
          break;
        default:
          record[field] = value === null || value === undefined ? null : json(value);
      }
    }
    return record as R;
  };
}
