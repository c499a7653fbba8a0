import type { PendingQuery, Row, Sql } from "postgres";

/** Statuses after which a delivery never changes again unless replayed. */
export const TERMINAL = `('succeeded', 'failed', 'dead-lettered', 'expired', 'cancelled')`;

/** Statuses `findReplayable`/`resetDeliveries` put back in the queue (not `cancelled`: endpoint gone). */
export const REPLAYABLE = `('succeeded', 'failed', 'dead-lettered', 'expired')`;

/**
 * Locks, in id order, the messages of the given deliveries. Run it before a statement that changes
 * their deliveries and finalises them: two workers finishing the last two deliveries of one message
 * then serialise, and the second one's statement (a fresh snapshot) sees the first one's delivery
 * as terminal, so the message is finalised exactly once and never left pending.
 */
export function lockMessagesOf(sql: Sql, deliveriesWhere: PendingQuery<Row[]>): PendingQuery<Row[]> {
  return sql`
    SELECT m.id FROM postel.messages m
    WHERE m.id IN (SELECT d.message_id FROM postel.deliveries d WHERE ${deliveriesWhere})
    ORDER BY m.id
    FOR UPDATE OF m`;
}

/**
 * A CTE named `finalised` giving every message touched by the CTE `changed` (id, message_id, status
 * of deliveries updated by the same statement) its final status once all its deliveries are terminal.
 * All CTEs share one snapshot, so the statuses in `changed` override the stale ones read from the table.
 */
export function finaliseMessages(sql: Sql, now: number): PendingQuery<Row[]> {
  return sql`
    finalised AS (
      UPDATE postel.messages m SET
        status = CASE WHEN f.any_dead THEN 'dead-lettered' WHEN f.any_expired THEN 'expired' ELSE 'dispatched' END,
        finished_at = ${now}::bigint
      FROM (
        SELECT d.message_id,
          bool_or(COALESCE(c.status, d.status) = 'dead-lettered') AS any_dead,
          bool_or(COALESCE(c.status, d.status) = 'expired') AS any_expired
        FROM postel.deliveries d
        LEFT JOIN changed c ON c.id = d.id
        WHERE d.message_id IN (SELECT message_id FROM changed)
        GROUP BY d.message_id
        HAVING bool_and(COALESCE(c.status, d.status) IN ${sql.unsafe(TERMINAL)})
      ) f
      WHERE m.id = f.message_id AND m.status = 'pending'
      RETURNING m.id
    )`;
}
