import type { PendingQuery, Row } from "postgres";
import { beforeAll, expect, test } from "vitest";
import { statsStatement } from "../src/operations/stats.js";
import { migratedDatabase } from "./support/database.js";

// An outage builds its backlog faster than autovacuum analyzes: the statistics still describe an
// empty queue. With the statuses written as literals, the planner then walked deliveries_due_idx
// (every pending row, by time) once per endpoint and filtered out the other endpoints' rows: 26-30 s
// per stats() beside 1,000,000 pending (bench `backlog`). This table reproduces those statistics.
const NOW = Date.UTC(2026, 0, 1);
const ENDPOINTS = 20;
const PENDING = 40_000;

const db = migratedDatabase();

beforeAll(async () => {
  const { sql } = db;
  await sql`ALTER TABLE postel.deliveries SET (autovacuum_enabled = false)`;
  await sql`
    INSERT INTO postel.endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
    SELECT 'ep_' || lpad(n::text, 3, '0'), 'https://example.com/' || n, '["*"]', '{}', '{}', 'active', ${NOW}, ${NOW}
    FROM generate_series(1, ${ENDPOINTS}) AS n`;
  // Analyzed beside finished history while nothing was pending...
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at, updated_at)
    SELECT 'dlv_h' || lpad(n::text, 7, '0'), 'msg_h' || n, 'ep_' || lpad((n % ${ENDPOINTS} + 1)::text, 3, '0'),
      'wh_h' || n, 'succeeded', ${NOW}::bigint - 86400000 + n, ${NOW}, ${NOW}
    FROM generate_series(1, ${PENDING}) AS n`;
  await sql`VACUUM ANALYZE postel.deliveries, postel.endpoints`;
  // ...then the backlog: half due, half waiting for a retry, never analyzed.
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at, updated_at)
    SELECT 'dlv_' || lpad(n::text, 7, '0'), 'msg_' || n, 'ep_' || lpad((n % ${ENDPOINTS} + 1)::text, 3, '0'),
      'wh_' || n, 'pending', CASE WHEN n % 2 = 0 THEN ${NOW}::bigint - n ELSE ${NOW}::bigint + n * 100 END, ${NOW}, ${NOW}
    FROM generate_series(1, ${PENDING}) AS n`;
});

async function plan(statement: PendingQuery<Row[]>): Promise<string> {
  return (await db.sql`EXPLAIN ${statement}`).map((row) => row["QUERY PLAN"]).join("\n");
}

test("stats counts each endpoint's backlog in its own range of deliveries_endpoint_due_idx on statistics of an empty queue", async () => {
  for (const query of [
    { now: NOW, since: NOW - 3_600_000, countCap: 1_000, leasesUntil: NOW + 120_000 },
    { now: NOW, since: NOW - 3_600_000, countCap: 10_000, endpointId: "ep_003" },
    { now: NOW, since: NOW - 3_600_000 },
  ]) {
    const text = await plan(statsStatement(db.sql, query));
    expect(text).not.toContain("deliveries_due_idx");
    expect(text).not.toMatch(/Seq Scan on deliveries\b/);
    expect(text).toContain("deliveries_endpoint_due_idx");
  }
});
