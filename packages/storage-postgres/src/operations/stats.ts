import {
  type EndpointState,
  type EndpointStatsSource,
  type StatsQuery,
  type StorageStats,
  statsOfEndpoints,
} from "@postel/core/storage";
import type { Sql, TransactionSql } from "postgres";
import { begin } from "../internal/begin.js";
import { epochMs, type RawRow } from "../internal/rows.js";

/**
 * The statement of `stats` (exported for the plan tests): one row. Every count is per endpoint (every
 * endpoint row, deleted ones too, so the totals include their dead letters), each a range of
 * deliveries_endpoint_due_idx (endpoint, status, next_attempt_at) that holds only that endpoint's
 * pending, held, dead-lettered or failed rows, never its succeeded history, and each stops at
 * `countCap` (a LIMIT inside the count), so a backlog of a million rows reads at most the cap of them;
 * attempts come from the endpoint's health buckets (primary key range), un-fanned messages from
 * messages_fanout_due_idx.
 * - Each status is an InitPlan, `(SELECT 'pending'::text)`, not a literal: a literal implies the
 *   predicates of the partial indexes (deliveries_due_idx holds every pending row by time), and with
 *   statistics taken while the queue was empty the planner walked that index for each endpoint,
 *   filtering out every other endpoint's rows: 26-30 s per call beside 1,000,000 pending (bench
 *   `backlog`, before ANALYZE). An InitPlan's value is unknown when planning, so only the range of
 *   deliveries_endpoint_due_idx can serve it, under custom and generic plans alike.
 * - Due and later work are counted from the index alone; lease owners are looked for only among the
 *   pending rows due by `leasesUntil` (no lease expires later), so a scheduled retry's row is not read
 *   to learn that it has none: one random heap page per row made the capped count ~2x slower.
 */
export function statsStatement(sql: Sql | TransactionSql, query: StatsQuery) {
  const now = epochMs(query.now);
  // Without a cap, LIMIT ALL: the same plan, every row counted.
  const cap =
    query.countCap === undefined ? sql`ALL` : sql`${Math.max(0, Math.floor(query.countCap))}::bigint`;
  const status = (name: "pending" | "held" | "dead-lettered" | "failed") =>
    sql.unsafe(`(SELECT '${name}'::text)`);
  const leasesUntil = query.leasesUntil === undefined ? null : epochMs(query.leasesUntil);
  const count = (name: "held" | "dead-lettered" | "failed", alias: string) => sql`
    CROSS JOIN LATERAL (
      SELECT count(*) AS n FROM (
        SELECT 1 FROM postel.deliveries d WHERE d.endpoint_id = e.id AND d.status = ${status(name)}
        LIMIT ${cap}
      ) c
    ) ${sql.unsafe(alias)}`;
  return sql<RawRow[]>`
    WITH per_endpoint AS (
      SELECT e.id, e.url, e.description, e.state, e.circuit_open_until, e.deleted_at IS NULL AS live,
        p.due, p.oldest_due_at, l.in_flight, GREATEST(0, n.later - l.in_flight) AS scheduled,
        h.n AS held, x.n AS dead_letters, f.n AS failed, w.attempts, w.failures
      FROM postel.endpoints e
      CROSS JOIN LATERAL (
        SELECT count(*) AS due, min(c.next_attempt_at) AS oldest_due_at FROM (
          SELECT d.next_attempt_at FROM postel.deliveries d
          WHERE d.endpoint_id = e.id AND d.status = ${status("pending")} AND d.next_attempt_at <= ${now}::bigint
          ORDER BY d.next_attempt_at LIMIT ${cap}
        ) c
      ) p
      CROSS JOIN LATERAL (
        SELECT count(*) AS later FROM (
          SELECT 1 FROM postel.deliveries d
          WHERE d.endpoint_id = e.id AND d.status = ${status("pending")} AND d.next_attempt_at > ${now}::bigint
          ORDER BY d.next_attempt_at LIMIT ${cap}
        ) c
      ) n
      CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE c.lease_token IS NOT NULL) AS in_flight FROM (
          SELECT d.lease_token FROM postel.deliveries d
          WHERE d.endpoint_id = e.id AND d.status = ${status("pending")} AND d.next_attempt_at > ${now}::bigint
            ${leasesUntil === null ? sql`` : sql`AND d.next_attempt_at <= ${leasesUntil}::bigint`}
          ORDER BY d.next_attempt_at LIMIT ${cap}
        ) c
      ) l
      ${count("held", "h")}
      ${count("dead-lettered", "x")}
      ${count("failed", "f")}
      CROSS JOIN LATERAL (
        SELECT COALESCE(sum(b.attempts), 0) AS attempts, COALESCE(sum(b.failures), 0) AS failures
        FROM postel.endpoint_health b
        WHERE b.endpoint_id = e.id AND b.bucket_start >= ${epochMs(query.since)}::bigint
      ) w
      ${query.endpointId !== undefined ? sql`WHERE e.id = ${query.endpointId}` : sql``}
    )
    SELECT
      (SELECT count(*) FROM (
        SELECT 1 FROM postel.messages m WHERE m.fanned_out_at IS NULL AND m.status = 'pending' LIMIT ${cap}
      ) u) AS unfanned,
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
      failed: Number(e["failed"]),
      attempts: Number(e["attempts"]),
      failures: Number(e["failures"]),
      live: e["live"] === true,
      oldestDueAt: e["oldest_due_at"] === null ? null : Number(e["oldest_due_at"]),
    }),
  );
  return statsOfEndpoints(endpoints, Number(row!["unfanned"]));
}
