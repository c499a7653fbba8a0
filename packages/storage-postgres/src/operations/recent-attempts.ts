import {
  type AttemptRecord,
  HEALTH_BUCKET_MS,
  idFloor,
  type RecentAttemptsQuery,
} from "@postel/core/storage";
import type { Sql, TransactionSql } from "postgres";
import { begin } from "../internal/begin.js";
import { epochMs, type RawRow, toAttempt } from "../internal/rows.js";
import { FINAL, FIRST_ATTEMPT } from "./attempts-after.js";

/**
 * The statement of `recentAttempts` (exported for the plan tests). Neither place an attempt is kept
 * has an index on its start time, and none is added (each would be written on every delivery):
 * - later attempts (`attempts`): their ids are made after they started, so `id >= idFloor(since)`
 *   is a primary-key range over the attempts recorded since about `since`;
 * - first attempts of open deliveries (pending or held): deliveries_first_attempt_open_idx by
 *   `first_attempt_id >= idFloor(since)` (a first attempt that failed; one that succeeded finished it);
 * - first attempts of finished deliveries: a finished delivery's `next_attempt_at` is when it finished,
 *   never before its first attempt started, so they are the deliveries_endpoint_due_idx ranges
 *   `next_attempt_at >= since` per final status of the endpoints whose health buckets saw an attempt
 *   since `since`: the deliveries finished since then, not the history. (Reading pending ones there
 *   too, by `next_attempt_at`, read every retry scheduled after `since`: 850,000 rows for none
 *   returned beside an outage of 1,000,000 pending, bench `backlog`.)
 */
export function recentAttemptsStatement(sql: Sql | TransactionSql, query: RecentAttemptsQuery) {
  const since = epochMs(query.since);
  const bucket = Math.floor(since / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
  const floor = idFloor("att", since);
  return sql<RawRow[]>`
    WITH active AS (
      SELECT e.id FROM postel.endpoints e
      WHERE EXISTS (
        SELECT 1 FROM postel.endpoint_health h WHERE h.endpoint_id = e.id AND h.bucket_start >= ${bucket}::bigint
      )
    )
    SELECT ${sql.unsafe(FIRST_ATTEMPT)}
    FROM active a
    CROSS JOIN ${sql.unsafe(FINAL)} AS s(status)
    CROSS JOIN LATERAL (
      -- OFFSET 0 keeps this a probe per endpoint and status: flattened, the planner may join a scan of
      -- every delivery instead, which on a small table looks cheaper.
      SELECT * FROM postel.deliveries d
      WHERE d.endpoint_id = a.id AND d.status = s.status AND d.next_attempt_at >= ${since}::bigint
        AND d.first_attempt_started_at >= ${since}::bigint
      OFFSET 0
    ) d
    UNION ALL
    SELECT ${sql.unsafe(FIRST_ATTEMPT)} FROM postel.deliveries d
    WHERE d.status IN ('pending', 'held') AND d.first_attempt_id IS NOT NULL AND d.first_attempt_id >= ${floor}
      AND d.first_attempt_started_at >= ${since}::bigint
    UNION ALL
    SELECT id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number, started_at, latency_ms,
      outcome, status_code, error_code, error, response_snippet
    FROM postel.attempts
    WHERE id >= ${floor} AND started_at >= ${since}::bigint
    ORDER BY started_at, id
    LIMIT ${query.limit}`;
}

/**
 * Attempts started at or after `since`, oldest first (see `recentAttemptsStatement` for how). Without
 * JIT, as `stats`: the probes per endpoint and status are estimated expensive, and compiling the plan
 * took 640 ms of a call that reads a few rows (bench `backlog`).
 */
export async function recentAttempts(sql: Sql, query: RecentAttemptsQuery): Promise<AttemptRecord[]> {
  const rows = await begin(sql, async (tx) => {
    await tx`SET LOCAL jit = off`;
    return recentAttemptsStatement(tx, query);
  });
  return rows.map(toAttempt);
}
