import {
  FINISHED_MESSAGE_STATUSES,
  type HealthPruneRequest,
  type PruneBatch,
  type PruneRequest,
  sqlStatusList,
} from "@postel/core/storage";
import type { PendingQuery, Row, Sql } from "postgres";
import { LEASE_ONLY } from "../internal/lease-tokens.js";
import { TERMINAL } from "../internal/sql-fragments.js";

/** Message statuses retention deletes. */
const FINISHED = sqlStatusList(FINISHED_MESSAGE_STATUSES);

/**
 * One retention batch, one statement (so one short transaction): walk the primary key of
 * `messages` from `after` for `limit` ids below `below`, lock the finished ones older than the cutoff
 * that no one else holds (`SKIP LOCKED`: a replay or a worker on one of them wins, and this batch
 * leaves it), and delete them with every delivery and attempt, found through
 * `deliveries_message_id_idx` and `attempts_message_id_idx`. No index or column is added for this:
 * the hot path pays nothing for retention.
 */
export async function pruneFinished(sql: Sql, request: PruneRequest): Promise<PruneBatch> {
  const [row] = await pruneStatement(sql, request);
  const examined = Number(row?.["examined"] ?? 0);
  return {
    messages: Number(row?.["messages"] ?? 0),
    deliveries: Number(row?.["deliveries"] ?? 0),
    attempts: Number(row?.["attempts"] ?? 0),
    next: examined === request.limit && examined > 0 ? (row?.["last"] as string) : null,
  };
}

/** The statement itself (tests EXPLAIN it to pin the index scans). */
export function pruneStatement(sql: Sql, request: PruneRequest): PendingQuery<Row[]> {
  const { after, below, limit, finishedBefore } = request;
  // The ids are also handed over as arrays, which the planner looks up in the indexes (see claim.ts).
  // A commit lost to a server crash only leaves rows a later pass deletes: no need to wait for the flush.
  return sql`
    WITH examined AS (
      SELECT id FROM postel.messages
      WHERE id > ${after} AND id < ${below} AND ${sql.unsafe(LEASE_ONLY)}
      ORDER BY id
      LIMIT ${limit}
    ), doomed AS (
      SELECT m.id FROM postel.messages m
      WHERE m.id = ANY(ARRAY(SELECT id FROM examined))
        AND m.status IN ${sql.unsafe(FINISHED)} AND m.finished_at < ${finishedBefore}::bigint
        AND NOT EXISTS (
          SELECT 1 FROM postel.deliveries d WHERE d.message_id = m.id AND d.status NOT IN ${sql.unsafe(TERMINAL)}
        )
        -- ORDERING_RULES.retention: a delivery holding its key stays, for the replay or skip to come.
        -- Through held_keys' primary key: no index on delivery_id for this.
        AND NOT EXISTS (
          SELECT 1 FROM postel.deliveries d
          JOIN postel.held_keys h ON h.endpoint_id = d.endpoint_id AND h.ordering_key = d.ordering_key
          WHERE d.message_id = m.id AND d.ordering_key IS NOT NULL AND h.delivery_id = d.id
        )
      ORDER BY m.id
      FOR UPDATE OF m SKIP LOCKED
    ), gone_attempts AS (
      DELETE FROM postel.attempts a WHERE a.message_id = ANY(ARRAY(SELECT id FROM doomed)) RETURNING 1
    ), gone_deliveries AS (
      DELETE FROM postel.deliveries d WHERE d.message_id = ANY(ARRAY(SELECT id FROM doomed))
      RETURNING d.first_attempt_id
    ), gone_messages AS (
      DELETE FROM postel.messages m WHERE m.id = ANY(ARRAY(SELECT id FROM doomed)) RETURNING 1
    )
    SELECT (SELECT count(*) FROM examined) AS examined,
      (SELECT max(id) FROM examined) AS last,
      (SELECT count(*) FROM gone_messages) AS messages,
      (SELECT count(*) FROM gone_deliveries) AS deliveries,
      (SELECT count(*) FROM gone_attempts) + (SELECT count(first_attempt_id) FROM gone_deliveries) AS attempts`;
}

/**
 * One batch of old endpoint health buckets, one statement: for each endpoint (deleted ones are soft
 * deleted, so every bucket's endpoint is there) its oldest buckets before the cutoff, a range of the
 * primary key `(endpoint_id, bucket_start)`; no index on `bucket_start` is kept for this.
 */
export async function pruneHealth(sql: Sql, request: HealthPruneRequest): Promise<number> {
  const [row] = await pruneHealthStatement(sql, request);
  return Number(row?.["n"] ?? 0);
}

/** The statement itself (tests EXPLAIN it to pin the per-endpoint range scans). */
export function pruneHealthStatement(sql: Sql, request: HealthPruneRequest): PendingQuery<Row[]> {
  const { startedBefore, limit } = request;
  // The rows go by ctid, handed over as an array (a TID scan): a join back on the key lets the
  // planner hash the whole table. A bucket an attempt updates meanwhile moves and stays for the
  // next pass.
  return sql`
    WITH gone AS (
      DELETE FROM postel.endpoint_health
      WHERE ctid = ANY(ARRAY(
        SELECT h.ctid FROM postel.endpoints e
        CROSS JOIN LATERAL (
          SELECT ctid FROM postel.endpoint_health
          WHERE endpoint_id = e.id AND bucket_start < ${startedBefore}::bigint
          ORDER BY bucket_start
          LIMIT ${limit}
        ) h
        LIMIT ${limit}
      ))
      RETURNING 1
    )
    SELECT count(*) AS n FROM gone`;
}
