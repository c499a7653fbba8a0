import {
  type EndpointState,
  type EndpointStatsSource,
  type StatsQuery,
  type StorageStats,
  statsOfEndpoints,
} from "@postel/core";
import type { Sql, TransactionSql } from "postgres";
import { begin } from "../internal/begin.js";
import { epochMs, type RawRow } from "../internal/rows.js";

/**
 * The statement of `stats` (exported for the plan tests): one row. Every count is per endpoint (every
 * endpoint row, deleted ones too, so the totals include their dead letters), each a range of
 * deliveries_endpoint_due_idx (endpoint, status) that holds only that endpoint's pending, held or
 * dead-lettered rows, never its finished history; attempts come from the endpoint's health buckets
 * (primary key range), un-fanned messages from messages_fanout_due_idx.
 */
export function statsStatement(sql: Sql | TransactionSql, query: StatsQuery) {
  const now = epochMs(query.now);
  return sql<RawRow[]>`
    WITH per_endpoint AS (
      SELECT e.id, e.url, e.description, e.state, e.circuit_open_until, e.deleted_at IS NULL AS live,
        p.due, p.oldest_due_at, p.in_flight, p.scheduled, h.held, x.dead_letters, w.attempts, w.failures
      FROM postel.endpoints e
      CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE d.next_attempt_at <= ${now}::bigint) AS due,
          min(d.next_attempt_at) FILTER (WHERE d.next_attempt_at <= ${now}::bigint) AS oldest_due_at,
          count(*) FILTER (WHERE d.next_attempt_at > ${now}::bigint AND d.lease_token IS NOT NULL) AS in_flight,
          count(*) FILTER (WHERE d.next_attempt_at > ${now}::bigint AND d.lease_token IS NULL) AS scheduled
        FROM postel.deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending'
      ) p
      CROSS JOIN LATERAL (
        SELECT count(*) AS held FROM postel.deliveries d WHERE d.endpoint_id = e.id AND d.status = 'held'
      ) h
      CROSS JOIN LATERAL (
        SELECT count(*) AS dead_letters FROM postel.deliveries d
        WHERE d.endpoint_id = e.id AND d.status = 'dead-lettered'
      ) x
      CROSS JOIN LATERAL (
        SELECT COALESCE(sum(b.attempts), 0) AS attempts, COALESCE(sum(b.failures), 0) AS failures
        FROM postel.endpoint_health b
        WHERE b.endpoint_id = e.id AND b.bucket_start >= ${epochMs(query.since)}::bigint
      ) w
      ${query.endpointId !== undefined ? sql`WHERE e.id = ${query.endpointId}` : sql``}
    )
    SELECT
      (SELECT count(*) FROM postel.messages m WHERE m.fanned_out_at IS NULL AND m.status = 'pending') AS unfanned,
      COALESCE((SELECT json_agg(p ORDER BY p.id) FROM per_endpoint p), '[]'::json)::text AS endpoints`;
}

/**
 * The queue by state per endpoint and in total, and each live endpoint's attempts since `since`.
 * Without JIT: a day's window reads tens of thousands of health buckets in ~50 ms, yet its estimated
 * cost passes the default `jit_above_cost` (the more so while the endpoints table, under autovacuum's
 * 50-row threshold, has never been analyzed), and compiling the plan took ~1 s (bench `dashboard`).
 */
export async function stats(sql: Sql, query: StatsQuery): Promise<StorageStats> {
  const [row] = await begin(sql, async (tx) => {
    await tx`SET LOCAL jit = off`;
    return statsStatement(tx, query);
  });
  const endpoints = (JSON.parse(String(row!["endpoints"])) as RawRow[]).map(
    (e): EndpointStatsSource => ({
      id: String(e["id"]),
      url: String(e["url"]),
      description: e["description"] === null ? null : String(e["description"]),
      state: e["state"] as EndpointState,
      circuitOpenUntil: e["circuit_open_until"] === null ? null : Number(e["circuit_open_until"]),
      due: Number(e["due"]),
      inFlight: Number(e["in_flight"]),
      scheduled: Number(e["scheduled"]),
      held: Number(e["held"]),
      deadLetters: Number(e["dead_letters"]),
      attempts: Number(e["attempts"]),
      failures: Number(e["failures"]),
      live: e["live"] === true,
      oldestDueAt: e["oldest_due_at"] === null ? null : Number(e["oldest_due_at"]),
    }),
  );
  return statsOfEndpoints(endpoints, Number(row!["unfanned"]));
}
