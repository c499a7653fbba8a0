import { type AttemptRecord, HEALTH_BUCKET_MS, idFloor, type RecentAttemptsQuery } from "@postel/core";
import type { Sql } from "postgres";
import { epochMs, type RawRow, toAttempt } from "../internal/rows.js";

// Every status: a delivery keeps its attempts whatever became of it.
const STATUSES =
  "(VALUES ('pending'), ('held'), ('succeeded'), ('failed'), ('dead-lettered'), ('expired'), ('cancelled'))";

/**
 * The statement of `recentAttempts` (exported for the plan tests). Neither place an attempt is kept
 * has an index on its start time, and none is added (each would be written on every delivery):
 * - later attempts (`attempts`): their ids are made after they started, so `id >= idFloor(since)`
 *   is a primary-key range over the attempts recorded since about `since`;
 * - first attempts (`deliveries.first_attempt_*`): a delivery's `next_attempt_at` is never before the
 *   start of an attempt it made (it becomes the lease expiry, a retry time or a reset time), so a
 *   first attempt started at or after `since` is on a delivery with `next_attempt_at >= since`. Those
 *   are found per endpoint and status in deliveries_endpoint_due_idx, for the endpoints whose health
 *   buckets saw an attempt since `since`: the deliveries finished since about `since` (a terminal
 *   delivery keeps its last lease expiry, so those claimed up to a lease duration earlier are read
 *   too), plus those endpoints' pending ones. Measured beside 1,000,000 finished deliveries at 500
 *   attempts/s: `since` 10 s back reads ~36,000 index entries and ~5,000 rows, 70 ms a call.
 */
export function recentAttemptsStatement(sql: Sql, query: RecentAttemptsQuery) {
  const since = epochMs(query.since);
  const bucket = Math.floor(since / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
  return sql<RawRow[]>`
    WITH active AS (
      SELECT e.id FROM postel.endpoints e
      WHERE EXISTS (
        SELECT 1 FROM postel.endpoint_health h WHERE h.endpoint_id = e.id AND h.bucket_start >= ${bucket}::bigint
      )
    )
    SELECT d.first_attempt_id AS id, d.id AS delivery_id, d.message_id, d.endpoint_id, d.webhook_id,
      1 AS attempt_number, d.first_attempt_started_at AS started_at, d.first_attempt_latency_ms AS latency_ms,
      d.first_attempt_outcome AS outcome, d.first_attempt_status_code AS status_code,
      d.first_attempt_error_code AS error_code, d.first_attempt_error AS error,
      d.first_attempt_response_snippet AS response_snippet
    FROM active a
    CROSS JOIN ${sql.unsafe(STATUSES)} AS s(status)
    CROSS JOIN LATERAL (
      -- OFFSET 0 keeps this a probe per endpoint and status: flattened, the planner may join a scan of
      -- every delivery instead, which on a small table looks cheaper.
      SELECT * FROM postel.deliveries d
      WHERE d.endpoint_id = a.id AND d.status = s.status AND d.next_attempt_at >= ${since}::bigint
        AND d.first_attempt_started_at >= ${since}::bigint
      OFFSET 0
    ) d
    UNION ALL
    SELECT id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number, started_at, latency_ms,
      outcome, status_code, error_code, error, response_snippet
    FROM postel.attempts
    WHERE id >= ${idFloor("att", since)} AND started_at >= ${since}::bigint
    ORDER BY started_at, id
    LIMIT ${query.limit}`;
}

/** Attempts started at or after `since`, oldest first (see `recentAttemptsStatement` for how). */
export async function recentAttempts(sql: Sql, query: RecentAttemptsQuery): Promise<AttemptRecord[]> {
  return (await recentAttemptsStatement(sql, query)).map(toAttempt);
}
