import type { InArgs, InValue } from "@libsql/client";
import {
  finalStatusCase,
  OPEN_DELIVERY_STATUSES,
  REPLAYABLE_DELIVERY_STATUSES,
  sqlStatusList,
} from "@postel/core/storage";
import type { Statement } from "./database.js";

// Statements shared by several role modules. Multi-row input travels as one JSON array argument,
// unpacked with json_each, so a batch of any size is a fixed, small number of statements.

/**
 * The rows bound to `:param` by `jsonArg(rows, keys)`, with their array index (`idx`) and one column
 * per key. Each row is materialized once: read straight from `json_each`, a row would be rendered
 * and parsed again for every column extracted from it.
 */
export function jsonRows(param: string, keys: readonly string[]): string {
  const columns = keys.map((key, i) => `v->>${i} AS ${key}`).join(", ");
  return `WITH ${param}_rows AS MATERIALIZED (SELECT key AS idx, value AS v FROM json_each(:${param}))
    SELECT idx, ${columns} FROM ${param}_rows`;
}

/**
 * The JSON argument `jsonRows(param, keys)` reads: every row as the array of its `keys` values, so
 * SQLite finds each column by position rather than by name.
 */
export function jsonArg<T>(rows: readonly T[], keys: readonly (keyof T & string)[]): string {
  return JSON.stringify(rows.map((row) => keys.map((key) => row[key])));
}

/** The fence of a leased delivery `alias`: still pending and leased with exactly this token. */
export function heldFence(alias: string, id: string, token: string): string {
  return `${alias}.id = ${id} AND ${alias}.lease_token = ${token} AND ${alias}.status = 'pending'`;
}

/** The fence of a message `alias` leased for fan-out: not fanned out yet and leased with this token. */
export function unfannedFence(alias: string, id: string, token: string): string {
  return `${alias}.id = ${id} AND ${alias}.lease_token = ${token} AND ${alias}.fanned_out_at IS NULL`;
}

/** Delivery statuses not done yet: a key's head (`pending`, `held`) and those `waiting` behind it. */
export const OPEN_STATUSES = sqlStatusList(OPEN_DELIVERY_STATUSES);

/** Delivery statuses `findReplayable` / `resetDeliveries` act on (`cancelled` is not replayable). */
export const REPLAYABLE_STATUSES = sqlStatusList(REPLAYABLE_DELIVERY_STATUSES);

/**
 * Give every message selected by `messageIds` (a subquery of ids) whose deliveries are all terminal
 * its final status, by core's rules (`finalStatusCase`).
 */
export function finaliseMessages(messageIds: string, args: InArgs): Statement {
  const anyDelivery = (condition: string) =>
    `EXISTS (SELECT 1 FROM postel_deliveries fd WHERE fd.message_id = postel_messages.id AND ${condition})`;
  return {
    sql: `UPDATE postel_messages SET
        status = ${finalStatusCase((status) => anyDelivery(`fd.status = '${status}'`))},
        finished_at = :now
      WHERE id IN (${messageIds})
        -- The unary + keeps SQLite (which has no statistics until ANALYZE) from walking the status
        -- index over every pending message instead of looking the few ids up by primary key.
        AND +status = 'pending' AND fanned_out_at IS NOT NULL
        AND NOT ${anyDelivery(`fd.status IN ${OPEN_STATUSES}`)}`,
    args,
  };
}

const REVISION_KEY = "'endpoints_revision'";

/** Bump the endpoints revision that fan-out caches are keyed by. */
export const bumpRevision: Statement = {
  sql: `INSERT INTO postel_meta (key, value) VALUES (${REVISION_KEY}, '1')
    ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`,
};

/**
 * Bump the endpoints revision only when the previous statement of the batch changed a row
 * (`changes()` still reports that statement while this one runs).
 */
export const bumpRevisionIfChanged: Statement = {
  sql: `INSERT INTO postel_meta (key, value) SELECT ${REVISION_KEY}, '1' WHERE changes() > 0
    ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`,
};

/** Read the endpoints revision (0 before the first endpoint write). */
export const readRevision: Statement = {
  sql: `SELECT value FROM postel_meta WHERE key = ${REVISION_KEY}`,
};

/**
 * `SELECT * FROM <table> WHERE … ORDER BY id DESC LIMIT :limit` with only the conditions whose
 * value `query` gives (SQLite plans a statement once for any argument, so `:x IS NULL OR …` could
 * use no index): a newest-first keyset page.
 */
export function newestFirst(
  table: string,
  conditions: Record<string, string>,
  query: { limit: number },
): Statement {
  const where: string[] = [];
  const args: Record<string, InValue> = { limit: Math.max(0, query.limit) };
  for (const [name, condition] of Object.entries(conditions)) {
    const value = (query as Record<string, unknown>)[name];
    if (value === undefined) continue;
    where.push(condition);
    args[name] = value as InValue;
  }
  return {
    sql: `SELECT * FROM ${table} ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY id DESC LIMIT :limit`,
    args,
  };
}
