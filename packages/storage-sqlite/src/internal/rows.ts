import type { Row, Value } from "@libsql/client";
import {
  ATTEMPT_ROW,
  AUDIT_ENTRY_ROW,
  arrayMapper,
  type ClaimedMessage,
  type ColumnReader,
  columnsOf,
  DELIVERY_ROW,
  ENDPOINT_ROW,
  MESSAGE_ROW,
  rowMapper,
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

/** Text column. */
export function str(row: Row, column: string): string {
  return String(get(row, column));
}

/** Nullable text column. */
export function strOrNull(row: Row, column: string): string | null {
  const value = get(row, column);
  return value === null ? null : String(value);
}

/** Code-unit order of ids, as SQLite's BINARY collation sorts them (core's ids sort by creation). */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** JSON text of a value, keeping SQL NULL for null. */
export function toJson(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** How libsql returns a value: integers as a number, bigint or string (by `intMode`), JSON as text. */
const LIBSQL: ColumnReader = {
  text: String,
  number: Number,
  json: (value) => JSON.parse(String(value)),
};

const MESSAGE_COLUMNS = columnsOf(MESSAGE_ROW);

/** `m.id AS m_id, …`: the message columns of a join, prefixed so they never clash with a delivery's. */
export const JOINED_MESSAGE_COLUMNS = MESSAGE_COLUMNS.map((column) => `m.${column} AS m_${column}`).join(
  ", ",
);

/** A `postel_messages` row. */
export const toMessage = rowMapper(MESSAGE_ROW, LIBSQL);

/** The `m_`-prefixed message columns of a join (`JOINED_MESSAGE_COLUMNS`). */
export const toJoinedMessage = rowMapper(MESSAGE_ROW, LIBSQL, "m_");

/**
 * SQL expression of a `postel_messages` row and its lease token as one JSON array (`toClaimedMessage`
 * reads it back). One column per row instead of thirteen: the driver's per-column decoding costs more
 * than the parse.
 */
export const CLAIMED_MESSAGE_JSON = `json_array(${MESSAGE_COLUMNS.join(", ")}, lease_token)`;

const messageOfArray = arrayMapper(MESSAGE_ROW, LIBSQL);

/** A message row and its lease token from the JSON array of `CLAIMED_MESSAGE_JSON`. */
export function toClaimedMessage(json: string): ClaimedMessage {
  const values = JSON.parse(json) as unknown[];
  return { message: messageOfArray(values), token: values[MESSAGE_COLUMNS.length] as string };
}

/** A `postel_deliveries` row. */
export const toDelivery = rowMapper(DELIVERY_ROW, LIBSQL);

/** A `postel_attempts` row. */
export const toAttempt = rowMapper(ATTEMPT_ROW, LIBSQL);

/** A `postel_endpoints` row with its `secrets` column (a JSON array built by the query, newest first). */
export const toEndpoint = rowMapper(ENDPOINT_ROW, LIBSQL);

/** A `postel_audit_log` row. */
export const toAuditEntry = rowMapper(AUDIT_ENTRY_ROW, LIBSQL);
