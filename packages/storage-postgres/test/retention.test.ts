import { messageIdBound, type PruneRequest } from "@postel/core/storage";
import { pruneAll } from "@postel/core/storage/conformance";
import type { Sql } from "postgres";
import { beforeEach, expect, test } from "vitest";
import { PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import { pruneHealthStatement, pruneStatement } from "../src/retention/prune.js";
import { migratedDatabase, truncatePostel } from "./support/database.js";

const NOW = Date.UTC(2026, 0, 1);
const CUTOFF = NOW - 86_400_000;
const db = migratedDatabase();
beforeEach(() => truncatePostel(db.sql));

function request(overrides: Partial<PruneRequest> = {}): PruneRequest {
  return { finishedBefore: CUTOFF, after: "", below: messageIdBound(CUTOFF), limit: 100, ...overrides };
}

// `count` messages finished long ago ('msg_0…' ids sort below any bound of this century), each with
// one delivery whose first attempt is inline and, for every tenth, a retry in postel.attempts.
async function seedHistory(sql: Sql, count: number): Promise<void> {
  const then = CUTOFF - 86_400_000;
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at, finished_at)
    SELECT 'msg_0' || lpad(i::text, 9, '0'), 'order.created', '{}', 'dispatched', ${then}::bigint + i,
      ${then}::bigint + i, ${then}::bigint + i
    FROM generate_series(1, ${count}::int) AS i`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, attempts_made,
      next_attempt_at, created_at, updated_at, first_attempt_id, first_attempt_started_at,
      first_attempt_latency_ms, first_attempt_outcome, first_attempt_status_code)
    SELECT 'dlv_0' || lpad(i::text, 9, '0'), 'msg_0' || lpad(i::text, 9, '0'), 'ep_1', 'wh_' || i,
      'succeeded', 1, ${then}::bigint + i, ${then}::bigint + i, ${then}::bigint + i,
      'att_0' || lpad(i::text, 9, '0'), ${then}::bigint + i, 3, 'success', 200
    FROM generate_series(1, ${count}::int) AS i`;
  await sql`
    INSERT INTO postel.attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
      started_at, latency_ms, outcome, status_code)
    SELECT 'att_1' || lpad(i::text, 9, '0'), 'dlv_0' || lpad(i::text, 9, '0'), 'msg_0' || lpad(i::text, 9, '0'),
      'ep_1', 'wh_' || i, 2, ${then}::bigint + i, 3, 'success', 200
    FROM generate_series(10, ${count}::int, 10) AS i`;
  await sql`ANALYZE postel.messages, postel.deliveries, postel.attempts`;
}

// Pending work beside the history: `count` messages, each with one due pending delivery.
async function seedDue(sql: Sql, count: number): Promise<void> {
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at)
    SELECT 'msg_z' || lpad(i::text, 9, '0'), 'order.created', '{}', 'pending', ${NOW}, ${NOW}
    FROM generate_series(1, ${count}::int) AS i`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at, updated_at)
    SELECT 'dlv_z' || lpad(i::text, 9, '0'), 'msg_z' || lpad(i::text, 9, '0'), 'ep_1', 'wh_z' || i, 'pending',
      ${NOW}, ${NOW}, ${NOW}
    FROM generate_series(1, ${count}::int) AS i`;
}

// One worker round: claim up to `limit` due deliveries and record them all succeeded; the ids recorded.
async function deliverDue(storage: PostgresStorageInstance, owner: string, limit: number): Promise<string[]> {
  const claimed = await storage.claimDue({ owner, now: NOW, until: NOW + 60_000, limit });
  if (claimed.length === 0) return [];
  const result = await storage.recordOutcomes(
    claimed.map((c) => ({
      deliveryId: c.delivery.id,
      leaseToken: c.leaseToken,
      transition: { kind: "succeeded" },
    })),
    NOW,
  );
  return result.recorded;
}

test("a batch walks the messages' primary key and finds children through their message_id indexes", async () => {
  const { sql } = db;
  await seedHistory(sql, 50_000);
  const plan = (await sql`EXPLAIN ${pruneStatement(sql, request({ limit: 500 }))}`)
    .map((row) => row["QUERY PLAN"])
    .join("\n");
  expect(plan).not.toContain("Seq Scan");
  expect(plan).toContain("messages_pkey");
  expect(plan).toContain("deliveries_message_id_idx");
  expect(plan).toContain("attempts_message_id_idx");
});

test("a health batch reads each endpoint's old buckets as a range of the primary key, never a scan of them all", async () => {
  const { sql } = db;
  // 200 endpoints with 500 buckets each.
  await sql`
    INSERT INTO postel.endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
    SELECT 'ep_' || e, 'https://example.com/hook', '[]', '{}', '{}', 'enabled', 0, 0 FROM generate_series(1, 200) e`;
  await sql`
    INSERT INTO postel.endpoint_health (endpoint_id, bucket_start, attempts, failures)
    SELECT 'ep_' || e, ${CUTOFF}::bigint + (b - 250) * 10000, 1, 0
    FROM generate_series(1, 200) e, generate_series(1, 500) b`;
  await sql`ANALYZE postel.endpoint_health`;
  const plan = (await sql`EXPLAIN ${pruneHealthStatement(sql, { startedBefore: CUTOFF, limit: 500 })}`)
    .map((row) => row["QUERY PLAN"])
    .join("\n");
  expect(plan).not.toMatch(/Seq Scan on endpoint_health/);
  expect(plan).toMatch(/Index Cond: \(\(endpoint_id = e\.id\) AND \(bucket_start < /);
  expect(plan).toContain("Tid Scan on endpoint_health");
  // And it deletes what it should: 249 old buckets per endpoint, 500 a batch.
  const storage = PostgresStorage({ sql });
  let deleted = 0;
  for (let batch = await storage.retention.pruneHealth({ startedBefore: CUTOFF, limit: 500 }); ; ) {
    deleted += batch;
    if (batch < 500) break;
    batch = await storage.retention.pruneHealth({ startedBefore: CUTOFF, limit: 500 });
  }
  expect(deleted).toBe(200 * 249);
  const [left] = await sql`SELECT count(*) AS n, min(bucket_start) AS oldest FROM postel.endpoint_health`;
  expect(Number(left!["n"])).toBe(200 * 251);
  expect(Number(left!["oldest"])).toBe(CUTOFF);
});

test("a pass over 20,000 finished messages deletes them all, every attempt included, and keeps live work", async () => {
  const { sql } = db;
  await seedHistory(sql, 20_000);
  await seedDue(sql, 10);
  const storage = PostgresStorage({ sql }, { migrate: false });
  const total = await pruneAll(storage, CUTOFF, 1000);
  expect(total).toEqual({ messages: 20_000, deliveries: 20_000, attempts: 22_000, batches: 21 });
  const [left] = await sql`
    SELECT (SELECT count(*) FROM postel.messages)::int AS messages,
      (SELECT count(*) FROM postel.deliveries)::int AS deliveries,
      (SELECT count(*) FROM postel.attempts)::int AS attempts`;
  expect(left).toEqual({ messages: 10, deliveries: 10, attempts: 0 });
});

test("an open prune batch blocks no claim or outcome, and skips a message another transaction holds", async () => {
  const { sql } = db;
  await seedHistory(sql, 1_000);
  await seedDue(sql, 20);
  // A worker's connection that gives up at once rather than wait for a lock.
  const worker = db.database.connect({ max: 1, connection: { lock_timeout: 1_000 } });
  const storage = PostgresStorage({ sql: worker }, { migrate: false });
  // Someone (a replay) holds the oldest finished message.
  const holder = db.database.connect({ max: 1 });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding!: () => void;
  const held = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const holderDone = holder.begin(async (tx) => {
    await tx`SELECT id FROM postel.messages WHERE id = 'msg_0000000001' FOR UPDATE`;
    holding();
    await released;
  });
  await held;

  await sql.begin(async (tx) => {
    const [row] = await pruneStatement(tx as unknown as Sql, request({ limit: 1_000 }));
    // The batch examined all 1,000 and deleted all but the one held (it did not wait for it).
    expect(Number(row!["messages"])).toBe(999);
    // While the prune transaction is open, a worker claims and records outcomes without waiting.
    expect(await deliverDue(storage, "w", 100)).toHaveLength(20);
  });
  release();
  await holderDone;
  const [left] = await sql`
    SELECT count(*) FILTER (WHERE status = 'dispatched')::int AS history,
      count(*) FILTER (WHERE id LIKE 'msg_z%' AND status = 'dispatched')::int AS delivered
    FROM postel.messages`;
  expect(left).toEqual({ history: 21, delivered: 20 });
});

test("prune passes running beside claiming workers lose no delivery and deliver none twice", async () => {
  const { sql } = db;
  await seedHistory(sql, 10_000);
  await seedDue(sql, 600);
  const pruner = PostgresStorage({ sql: db.database.connect({ max: 2 }) }, { migrate: false });
  const workers = Array.from({ length: 3 }, () =>
    PostgresStorage({ sql: db.database.connect({ max: 2 }) }, { migrate: false }),
  );
  const work = async (storage: PostgresStorageInstance, owner: string) => {
    const delivered: string[] = [];
    for (
      let round = await deliverDue(storage, owner, 10);
      round.length > 0;
      round = await deliverDue(storage, owner, 10)
    )
      delivered.push(...round);
    return delivered;
  };
  const pruning = pruneAll(pruner, CUTOFF, 200);
  const delivered = (await Promise.all(workers.map((storage, i) => work(storage, `w${i}`)))).flat();
  const pruned = await pruning;
  expect(new Set(delivered).size).toBe(600);
  expect(delivered).toHaveLength(600);
  expect(pruned).toMatchObject({ messages: 10_000, deliveries: 10_000, attempts: 11_000 });
  const [left] = await sql`SELECT count(*)::int AS n FROM postel.messages WHERE status = 'dispatched'`;
  // Only the 600 just delivered remain: they finished at NOW, after the cutoff.
  expect(left).toEqual({ n: 600 });
});
