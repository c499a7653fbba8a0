import {
  ATTEMPT_ROW,
  AUDIT_ENTRY_ROW,
  type ColumnReader,
  columnsOf,
  DELIVERY_ROW,
  ENDPOINT_ROW,
  MESSAGE_ROW,
  rowMapper,
} from "@postel/core/storage";

/** A raw result row; postgres.js returns `bigint` columns as strings, hence `Number` below. */
export type RawRow = Record<string, unknown>;

/** How postgres.js returns a value: text as strings, `bigint` as strings, `jsonb` parsed. */
const POSTGRES_JS: ColumnReader = {
  text: (value) => value as string,
  number: Number,
  json: (value) => value,
};

const MESSAGE_FIELDS = columnsOf(MESSAGE_ROW);

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
export const DELIVERY_COLUMNS = columnsOf(DELIVERY_ROW)
  .map((column) => `d.${column}`)
  .join(", ");

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

/** A `postel.messages` row. */
export const toMessage = rowMapper(MESSAGE_ROW, POSTGRES_JS);

/** The `m_`-prefixed message columns of a joined row (`PREFIXED_MESSAGE_COLUMNS`). */
export const toJoinedMessage = rowMapper(MESSAGE_ROW, POSTGRES_JS, "m_");

/** A `postel.deliveries` row. */
export const toDelivery = rowMapper(DELIVERY_ROW, POSTGRES_JS);

/** A `postel.all_attempts` row. */
export const toAttempt = rowMapper(ATTEMPT_ROW, POSTGRES_JS);

/** A `postel.endpoints` row with its `secrets` (`ENDPOINT_COLUMNS`). */
export const toEndpoint = rowMapper(ENDPOINT_ROW, POSTGRES_JS);

/** Columns of `postel.audit_log` that make an `AuditLogRecord`. */
export const AUDIT_ENTRY_COLUMNS = columnsOf(AUDIT_ENTRY_ROW).join(", ");

/** A `postel.audit_log` row. */
export const toAuditEntry = rowMapper(AUDIT_ENTRY_ROW, POSTGRES_JS);

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
