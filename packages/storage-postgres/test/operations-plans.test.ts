import { HEALTH_BUCKET_MS, idFloor } from "@postel/core";
import type { PendingQuery, Row } from "postgres";
import { beforeAll, expect, test } from "vitest";
import { PostgresStorage } from "../src/index.js";
import { listDeadLettersStatement, listMessagesStatement } from "../src/operations/listings.js";
import { attemptsAfterStatement } from "../src/operations/attempts-after.js";
import { healthBucketsStatement } from "../src/operations/health-buckets.js";
import { recentAttemptsStatement } from "../src/operations/recent-attempts.js";
import { statsStatement } from "../src/operations/stats.js";
import { migratedDatabase } from "./support/database.js";

// The operations reads run beside millions of finished rows: none may read the history. On a few
// thousand finished rows (with enable_seqscan untouched) a plan that scans a whole table shows up as a
// Seq Scan, so these tests fail on one. (The bench's `history` scenario has the 1,000,000-row figures.)
const NOW = Date.UTC(2026, 0, 1);
const HISTORY = 6_000;
const ENDPOINTS = 20;

const db = migratedDatabase();

beforeAll(async () => {
  const { sql } = db;
  await sql`
    INSERT INTO postel.endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
    SELECT 'ep_' || lpad(n::text, 3, '0'), 'https://example.com/' || n, '["*"]', '{}', '{}', 'active', ${NOW}, ${NOW}
    FROM generate_series(1, ${ENDPOINTS}) AS n`;
  // A month of finished history: messages, their delivery (first attempt in the row), a later attempt
  // for every tenth, every fiftieth dead-lettered, and the health buckets they filled.
  const then = NOW - 30 * 86_400_000;
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at, finished_at)
    SELECT 'msg_h' || lpad(n::text, 7, '0'), 'order.created', '{}', 'dispatched', ${then}::bigint + n * 400,
      ${then}::bigint + n * 400, ${then}::bigint + n * 400
    FROM generate_series(1, ${HISTORY}) AS n`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, attempts_made, next_attempt_at,
      created_at, updated_at, first_attempt_id, first_attempt_started_at, first_attempt_latency_ms, first_attempt_outcome)
    SELECT 'dlv_h' || lpad(n::text, 7, '0'), 'msg_h' || lpad(n::text, 7, '0'), 'ep_' || lpad((n % ${ENDPOINTS} + 1)::text, 3, '0'),
      'wh_' || n, CASE WHEN n % 50 = 0 THEN 'dead-lettered' ELSE 'succeeded' END, 1, ${then}::bigint + n * 400 + 60000,
      ${then}::bigint + n * 400, ${then}::bigint + n * 400, 'att_h' || lpad(n::text, 7, '0'), ${then}::bigint + n * 400, 5, 'success'
    FROM generate_series(1, ${HISTORY}) AS n`;
  // Attempt ids are made when the response arrives, time-sortable like core's (idFloor + random part).
  const later = Array.from({ length: HISTORY / 10 }, (_, i) => (i + 1) * 10);
  await sql`
    INSERT INTO postel.attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number, started_at,
      latency_ms, outcome)
    SELECT a.id, 'dlv_h' || lpad(a.n::text, 7, '0'), 'msg_h' || lpad(a.n::text, 7, '0'),
      'ep_' || lpad((a.n % ${ENDPOINTS} + 1)::text, 3, '0'), 'wh_' || a.n, 2, ${then}::bigint + a.n * 400 + 1000, 5, 'success'
    FROM unnest(${later.map((n) => `${idFloor("att", then + n * 400 + 1005)}0000000000000000`)}::text[],
      ${later}::int[]) AS a(id, n)`;
  await sql`
    INSERT INTO postel.endpoint_health (endpoint_id, bucket_start, attempts, failures)
    SELECT endpoint_id, first_attempt_started_at / ${HEALTH_BUCKET_MS} * ${HEALTH_BUCKET_MS}, count(*), 0
    FROM postel.deliveries GROUP BY 1, 2`;
  // Live work: a few pending deliveries and messages waiting for fan-out.
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at, updated_at)
    SELECT 'dlv_p' || lpad(n::text, 3, '0'), 'msg_h0000001', 'ep_001', 'wh_p' || n, 'pending', ${NOW}::bigint - n, ${NOW}, ${NOW}
    FROM generate_series(1, 10) AS n`;
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at)
    SELECT 'msg_u' || n, 'order.created', '{}', 'pending', ${NOW}::bigint + n FROM generate_series(1, 5) AS n`;
  await sql`VACUUM ANALYZE postel.messages, postel.deliveries, postel.attempts, postel.endpoint_health, postel.endpoints`;
});

async function plan(statement: PendingQuery<Row[]>): Promise<string> {
  return (await db.sql`EXPLAIN ${statement}`).map((row) => row["QUERY PLAN"]).join("\n");
}

/** Fails on a sequential scan of a table that holds history (endpoints, a small table, may be scanned). */
function expectNoHistoryScan(text: string): void {
  expect(text).not.toMatch(/Seq Scan on (messages|deliveries|attempts|endpoint_health)\b/);
}

test("stats reads each endpoint's live rows through deliveries_endpoint_due_idx, never the finished history", async () => {
  const text = await plan(statsStatement(db.sql, { now: NOW, since: NOW - 3_600_000 }));
  expectNoHistoryScan(text);
  expect(text).toContain("deliveries_endpoint_due_idx");
  expect(text).toContain("endpoint_health_endpoint_id_bucket_start_pk");
  expect(text).toContain("messages_fanout_due_idx");

  const storage = PostgresStorage({ sql: db.sql }, { migrate: false });
  const stats = await storage.operations.stats({ now: NOW, since: NOW - 3_600_000 });
  expect(stats.totals).toMatchObject({ due: 10, deadLetters: HISTORY / 50 });
  expect(stats.unfanned).toBe(5);
});

test("recentAttempts reads the attempts' primary key from idFloor and the deliveries through deliveries_endpoint_due_idx", async () => {
  const since = NOW - 30 * 86_400_000 + (HISTORY - 100) * 400;
  const text = await plan(recentAttemptsStatement(db.sql, { since, limit: 100 }));
  expectNoHistoryScan(text);
  expect(text).toContain("deliveries_endpoint_due_idx");
  expect(text).toContain("attempts_pkey");

  const storage = PostgresStorage({ sql: db.sql }, { migrate: false });
  const recent = await storage.operations.recentAttempts({ since, limit: 1_000 });
  // The first attempts of deliveries 5,900 to 6,000, and the later attempts of 5,900, 5,910, ... 6,000.
  expect(recent).toHaveLength(101 + 11);
  expect(recent.map((a) => a.startedAt)).toEqual(recent.map((a) => a.startedAt).sort((a, b) => a - b));
});

test("attemptsAfter reads the attempts' primary key, the open first attempts' index and the finished deliveries since its time, never the history", async () => {
  const start = NOW - 30 * 86_400_000 + (HISTORY - 100) * 400;
  for (const query of [
    { after: idFloor("att", start), limit: 1000 },
    { after: idFloor("att", start), limit: 1000, endpointId: "ep_001", outcome: "success" as const },
    { after: idFloor("att", start), limit: 1000, type: "order.created" },
  ]) {
    const text = await plan(attemptsAfterStatement(db.sql, query));
    expectNoHistoryScan(text);
    expect(text).toContain("deliveries_endpoint_due_idx");
    expect(text).toContain("deliveries_first_attempt_open_idx");
    expect(text).toContain("attempts_pkey");
  }
  const storage = PostgresStorage({ sql: db.sql }, { migrate: false });
  const feed = await storage.operations.attemptsAfter!({ after: idFloor("att", start), limit: 1_000 });
  // The first attempts of deliveries 5,900 to 6,000 (made 5 ms after their start, like the ids here),
  // and the later attempts of 5,900, 5,910, ... 6,000, in id order.
  expect(feed.length).toBeGreaterThanOrEqual(101);
  expect(feed.map((a) => a.id)).toEqual(feed.map((a) => a.id).sort());
});

test("healthBuckets reads a range of endpoint_health's key per endpoint, never the month of buckets", async () => {
  const since = NOW - 30 * 86_400_000 + 3_600_000 * 24 * 29;
  for (const statement of [
    healthBucketsStatement(db.sql, { since }),
    healthBucketsStatement(db.sql, { since, endpointId: "ep_003" }),
  ]) {
    const text = await plan(statement);
    expectNoHistoryScan(text);
    expect(text).toContain("endpoint_health_endpoint_id_bucket_start_pk");
  }
});

test("a page of dead letters walks deliveries_dead_lettered_idx, with or without filters", async () => {
  for (const query of [
    { limit: 101 },
    { limit: 101, after: "dlv_h0003000", endpointId: "ep_001" },
    { limit: 101, since: NOW - 86_400_000, until: NOW },
  ]) {
    const text = await plan(listDeadLettersStatement(db.sql, query));
    expectNoHistoryScan(text);
    expect(text).toMatch(/deliveries_dead_lettered_idx|deliveries_endpoint_due_idx/);
  }
});

test("a page of permanently failed deliveries walks deliveries_failed_idx, with or without filters", async () => {
  for (const query of [
    { limit: 101, status: "failed" as const },
    { limit: 101, status: "failed" as const, after: "dlv_h0003000", endpointId: "ep_001" },
    { limit: 101, status: "failed" as const, since: NOW - 86_400_000, until: NOW },
  ]) {
    const text = await plan(listDeadLettersStatement(db.sql, query));
    expectNoHistoryScan(text);
    expect(text).toMatch(/deliveries_failed_idx|deliveries_endpoint_due_idx/);
  }
});

test("a page of messages walks the primary key backwards", async () => {
  const text = await plan(listMessagesStatement(db.sql, { limit: 101, after: "msg_h0003000" }));
  expectNoHistoryScan(text);
  expect(text).toContain("Index Scan Backward using messages_pkey");
});

test("a page of messages by a final status walks messages_dead_or_expired_idx, never the history", async () => {
  for (const status of ["dead-lettered", "expired"] as const) {
    const text = await plan(listMessagesStatement(db.sql, { limit: 101, status }));
    expectNoHistoryScan(text);
    expect(text).toContain("messages_dead_or_expired_idx");
  }
});

test("a page of one tenant's messages walks messages_tenant_idx, with custom and generic plans alike", async () => {
  const { sql } = db;
  // 30 messages of one tenant among the 6,000 without one, spread through the month.
  await sql`
    INSERT INTO postel.messages (id, type, payload, tenant_id, status, created_at, fanned_out_at, finished_at)
    SELECT 'msg_t' || lpad((n * 199)::text, 7, '0'), 'order.created', '{}', 'acme', 'dispatched', ${NOW}, ${NOW}, ${NOW}
    FROM generate_series(1, 30) AS n`;
  await sql`ANALYZE postel.messages`;
  for (const query of [
    { limit: 11, tenantId: "acme" },
    { limit: 11, tenantId: "acme", after: "msg_t0003000" },
  ]) {
    const text = await plan(listMessagesStatement(sql, query));
    expectNoHistoryScan(text);
    expect(text).toContain("messages_tenant_idx");
  }
  const reserved = await sql.reserve();
  try {
    await reserved`SET plan_cache_mode = force_generic_plan`;
    const generic =
      await reserved`EXPLAIN ${listMessagesStatement(reserved, { limit: 11, tenantId: "acme", after: "msg_t0003000" })}`;
    expect(generic.map((row) => row["QUERY PLAN"]).join("\n")).toContain("messages_tenant_idx");
  } finally {
    reserved.release();
  }
  const storage = PostgresStorage({ sql }, { migrate: false });
  expect(storage.operations.indexedMessageFilters).toEqual(["tenantId"]);
  const page = await storage.operations.listMessages({ limit: 11, tenantId: "acme" });
  expect(page.map((m) => m.id)).toEqual(
    Array.from({ length: 11 }, (_, i) => `msg_t${String((30 - i) * 199).padStart(7, "0")}`),
  );
});
