import type { InArgs } from "@libsql/client";
import type { Statement } from "./database.js";

// Statements shared by several role modules. Multi-row input travels as one JSON array argument,
// unpacked with json_each, so a batch of any size is a fixed, small number of statements.

/**
 * `SELECT key AS idx, value->>'a' AS a, … FROM json_each(:param)`: the rows of a JSON array of
 * objects bound to `:param`, with their array index and one column per key.
 */
export function jsonRows(param: string, keys: readonly string[]): string {
  const columns = keys.map((key) => `value->>'${key}' AS ${key}`).join(", ");
  return `SELECT key AS idx, ${columns} FROM json_each(:${param})`;
}

/** Delivery statuses `findReplayable` / `resetDeliveries` act on (`cancelled` is not replayable). */
export const REPLAYABLE_STATUSES = "('succeeded', 'failed', 'dead-lettered', 'expired')";

/**
 * Give every message selected by `messageIds` (a subquery of ids) whose deliveries are all terminal
 * its final status: `dead-lettered` if any delivery is, else `expired` if any is, else `dispatched`.
 */
export function finaliseMessages(messageIds: string, args: InArgs): Statement {
  const anyDelivery = (condition: string) =>
    `EXISTS (SELECT 1 FROM postel_deliveries fd WHERE fd.message_id = postel_messages.id AND ${condition})`;
  return {
    sql: `UPDATE postel_messages SET
        status = CASE
          WHEN ${anyDelivery("fd.status = 'dead-lettered'")} THEN 'dead-lettered'
          WHEN ${anyDelivery("fd.status = 'expired'")} THEN 'expired'
          ELSE 'dispatched' END,
        finished_at = :now
      WHERE id IN (${messageIds})
        -- The unary + keeps SQLite (which has no statistics until ANALYZE) from walking the status
        -- index over every pending message instead of looking the few ids up by primary key.
        AND +status = 'pending' AND fanned_out_at IS NOT NULL
        AND NOT ${anyDelivery("fd.status IN ('pending', 'held')")}`,
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
