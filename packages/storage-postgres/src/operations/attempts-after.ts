import {
  type AttemptFeedQuery,
  type AttemptRecord,
  HEALTH_BUCKET_MS,
  idTime,
  TERMINAL_DELIVERY_STATUSES,
} from "@postel/core/storage";
import type { Sql } from "postgres";
import { epochMs, type RawRow, toAttempt } from "../internal/rows.js";

// A delivery's first attempt lives in its row; it reached a final status or is still open.
export const FINAL = `(VALUES ${TERMINAL_DELIVERY_STATUSES.map((status) => `('${status}')`).join(", ")})`;
// How far before the feed's time an endpoint's health buckets are looked at: an attempt's bucket is
// that of its start, which is at most a request's duration (bounded by the lease) before its id.
const ACTIVE_LOOKBACK_MS = 10 * 60_000;

/** The columns of an attempt, read from a delivery's first attempt (`d`). */
export const FIRST_ATTEMPT = `d.first_attempt_id AS id, d.id AS delivery_id, d.message_id, d.endpoint_id, d.webhook_id,
  1 AS attempt_number, d.first_attempt_started_at AS started_at, d.first_attempt_latency_ms AS latency_ms,
  d.first_attempt_outcome AS outcome, d.first_attempt_status_code AS status_code,
  d.first_attempt_error_code AS error_code, d.first_attempt_error AS error,
  d.first_attempt_response_snippet AS response_snippet`;

/**
 * The statement of `attemptsAfter` (exported for the plan tests): the attempts with ids above
 * `after`, from the three places they are kept, each read by an index and bounded by the feed's time
 * `t` (the time in `after`):
 * - later attempts (`attempts`): a primary-key range;
 * - first attempts of open deliveries (pending or held): deliveries_first_attempt_open_idx, which
 *   holds only deliveries whose first attempt failed and that are still open (never written on the
 *   way of a delivery that succeeds);
 * - first attempts of finished deliveries: a finished delivery's `next_attempt_at` is when it finished
 *   (or its last lease expiry, for rows finished before migration 0013), never before its first
 *   attempt's id was made, so they are the deliveries_endpoint_due_idx ranges `next_attempt_at >= t` of
 *   the endpoints whose health buckets saw an attempt since shortly before `t`: the deliveries finished
 *   since `t`, not the history.
 */
export function attemptsAfterStatement(sql: Sql, query: AttemptFeedQuery) {
  const since = idTime(query.after) ?? 0;
  const bucket = Math.floor(Math.max(0, since - ACTIVE_LOOKBACK_MS) / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
  const empty = sql``;
  const onEndpoint = (column: string) =>
    query.endpointId === undefined ? empty : sql`AND ${sql.unsafe(column)} = ${query.endpointId}`;
  const withOutcome = (column: string) =>
    query.outcome === undefined ? empty : sql`AND ${sql.unsafe(column)} = ${query.outcome}`;
  return sql<RawRow[]>`
    WITH active AS (
      SELECT e.id FROM postel.endpoints e
      WHERE EXISTS (
        SELECT 1 FROM postel.endpoint_health h WHERE h.endpoint_id = e.id AND h.bucket_start >= ${bucket}::bigint
      ) ${onEndpoint("e.id")}
    ), feed AS (
      SELECT ${sql.unsafe(FIRST_ATTEMPT)}
      FROM active a
      CROSS JOIN ${sql.unsafe(FINAL)} AS s(status)
      CROSS JOIN LATERAL (
        -- OFFSET 0 keeps this a probe per endpoint and status (see recentAttemptsStatement).
        SELECT * FROM postel.deliveries d
        WHERE d.endpoint_id = a.id AND d.status = s.status AND d.next_attempt_at >= ${epochMs(since)}::bigint
          AND d.first_attempt_id > ${query.after} ${withOutcome("d.first_attempt_outcome")}
        OFFSET 0
      ) d
      UNION ALL
      SELECT ${sql.unsafe(FIRST_ATTEMPT)} FROM postel.deliveries d
      WHERE d.status IN ('pending', 'held') AND d.first_attempt_id IS NOT NULL AND d.first_attempt_id > ${query.after}
        ${onEndpoint("d.endpoint_id")} ${withOutcome("d.first_attempt_outcome")}
      UNION ALL
      SELECT id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number, started_at, latency_ms,
        outcome, status_code, error_code, error, response_snippet
      FROM postel.attempts
      WHERE id > ${query.after} ${onEndpoint("endpoint_id")} ${withOutcome("outcome")}
    )
    SELECT f.* FROM feed f
    ${
      query.type === undefined
        ? empty
        : sql`WHERE (SELECT m.type FROM postel.messages m WHERE m.id = f.message_id) = ${query.type}`
    }
    ORDER BY f.id
    LIMIT ${Math.max(0, query.limit)}`;
}

/** Attempts with ids above `after`, lowest first (see `attemptsAfterStatement` for how). */
export async function attemptsAfter(sql: Sql, query: AttemptFeedQuery): Promise<AttemptRecord[]> {
  return (await attemptsAfterStatement(sql, query)).map(toAttempt);
}
