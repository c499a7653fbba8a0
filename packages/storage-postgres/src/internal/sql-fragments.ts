import {
  finalStatusCase,
  MESSAGE_FINAL_STATUS,
  REPLAYABLE_DELIVERY_STATUSES,
  sqlStatusList,
  TERMINAL_DELIVERY_STATUSES,
} from "@postel/core/storage";
import type { PendingQuery, Row, Sql } from "postgres";

/**
 * Ends a correlated `EXISTS` probe so it stays a probe per row. Without it PostgreSQL may plan the
 * probe as a hashed subplan that reads every row matching the subquery's other conditions, once per
 * statement: planned on small tables, the ordering checks read every open keyed delivery (or held
 * key, or unfinished keyed message) of every endpoint at every fan-out, so a failing endpoint's
 * growing backlog made every other key's fan-out slower. An OFFSET keeps the planner from rewriting
 * the EXISTS (it rewrites only one without LIMIT/OFFSET clauses it cannot drop).
 */
export const PER_ROW = "OFFSET 0";

/** Statuses after which a delivery never changes again unless replayed. */
export const TERMINAL = sqlStatusList(TERMINAL_DELIVERY_STATUSES);

/** Statuses `findReplayable`/`resetDeliveries` put back in the queue (not `cancelled`: endpoint gone). */
export const REPLAYABLE = sqlStatusList(REPLAYABLE_DELIVERY_STATUSES);

// Core's rules for a message's final status (MESSAGE_FINAL_STATUS), as SQL: one flag per rule over the
// deliveries changed by the statement (`c`) and over the snapshot's (`s`), and the CASE that reads them.
const RULE_FLAGS = (prefix: string) =>
  MESSAGE_FINAL_STATUS.map((rule, i) => `bool_or(${prefix}status = '${rule.anyDelivery}') AS any_${i}`).join(
    ", ",
  );
const FINAL_STATUS = finalStatusCase((status) => {
  const i = MESSAGE_FINAL_STATUS.findIndex((rule) => rule.anyDelivery === status);
  return `c.any_${i} OR s.any_${i}`;
});

/**
 * Locks, in id order, the messages of the given deliveries. Run it before a statement that changes
 * their deliveries and finalises them: two workers finishing the last two deliveries of one message
 * then serialise, and the second one's statement (a fresh snapshot) sees the first one's delivery
 * as terminal, so the message is finalised exactly once and never left pending.
 */
export function lockMessagesOf(sql: Sql, deliveriesWhere: PendingQuery<Row[]>): PendingQuery<Row[]> {
  return sql`
    SELECT m.id FROM postel.messages m
    WHERE m.id = ANY(ARRAY(SELECT d.message_id FROM postel.deliveries d WHERE ${deliveriesWhere}))
    ORDER BY m.id
    FOR UPDATE OF m`;
}

/**
 * A CTE named `finalised` giving every message touched by the CTE `changed` (id, message_id, status
 * of deliveries updated by the same statement) its final status once all its deliveries are terminal.
 *
 * All CTEs share one snapshot, in which every delivery in `changed` is still non-terminal (callers
 * only change pending or held deliveries). So a message is finished when all its changed deliveries
 * are now terminal and the snapshot's count of its non-terminal deliveries equals the number changed.
 * Counting instead of joining `changed` back to the table keeps this linear in the batch size; the
 * messages are reached through their keys as an array (see `pipelinedTransaction`).
 */
export function finaliseMessages(sql: Sql, now: number): PendingQuery<Row[]> {
  return sql`
    finalised AS (
      UPDATE postel.messages m SET
        status = ${sql.unsafe(FINAL_STATUS)},
        finished_at = ${now}::bigint
      FROM (
        SELECT message_id, count(*) AS changed,
          bool_and(status IN ${sql.unsafe(TERMINAL)}) AS all_terminal,
          ${sql.unsafe(RULE_FLAGS(""))}
        FROM changed GROUP BY message_id
      ) c
      CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE d.status NOT IN ${sql.unsafe(TERMINAL)}) AS open,
          ${sql.unsafe(RULE_FLAGS("d."))}
        FROM postel.deliveries d WHERE d.message_id = c.message_id
      ) s
      WHERE c.all_terminal AND s.open = c.changed AND m.id = c.message_id AND m.status = 'pending'
        AND m.id = ANY(ARRAY(SELECT message_id FROM changed))
      RETURNING m.id
    )`;
}
