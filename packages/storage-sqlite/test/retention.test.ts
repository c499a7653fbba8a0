import type { Client } from "@libsql/client";
import { messageIdBound, type PruneRequest } from "@postel/core/storage";
import { pruneAll } from "@postel/core/storage/conformance";
import { expect, test } from "vitest";
import type { Statement } from "../src/internal/database.js";
import { pruneHealthStatement, pruneStatements } from "../src/retention/prune.js";
import { freshStorageEachTest } from "./temp-db.js";

const NOW = Date.UTC(2026, 0, 1);
const CUTOFF = NOW - 86_400_000;

const storage = freshStorageEachTest();

function request(overrides: Partial<PruneRequest> = {}): PruneRequest {
  return { finishedBefore: CUTOFF, after: "", below: messageIdBound(CUTOFF), limit: 500, ...overrides };
}

// `count` messages finished long ago, each with one delivery and one attempt (two for every tenth).
async function seedHistory(client: Client, count: number): Promise<void> {
  const then = CUTOFF - 86_400_000;
  await client.batch(
    [
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
       INSERT INTO postel_messages (id, type, payload, status, created_at, fanned_out_at, finished_at)
       SELECT printf('msg_0%09d', i), 'order.created', '{}', 'dispatched', ${then} + i, ${then} + i, ${then} + i FROM n`,
      `INSERT INTO postel_deliveries (id, message_id, endpoint_id, webhook_id, status, attempts_made,
         next_attempt_at, created_at, updated_at)
       SELECT 'dlv' || substr(id, 4), id, 'ep_1', id, 'succeeded', 1, created_at, created_at, created_at
       FROM postel_messages`,
      `INSERT INTO postel_attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
         started_at, latency_ms, outcome, status_code)
       SELECT 'att' || substr(d.id, 4) || '_' || k.n, d.id, d.message_id, 'ep_1', d.webhook_id, k.n,
         d.created_at, 3, 'success', 200
       FROM postel_deliveries d JOIN (SELECT 1 AS n UNION ALL SELECT 2) k
         ON k.n = 1 OR CAST(substr(d.id, 6) AS INTEGER) % 10 = 0`,
    ],
    "write",
  );
}

// The plan of a statement as the prune batch runs it: foreign-key checks off (see WriteOptions).
async function explain(statement: Statement): Promise<string> {
  await storage().client.execute("PRAGMA foreign_keys = OFF");
  try {
    const plan = await storage().client.execute({
      sql: `EXPLAIN QUERY PLAN ${statement.sql}`,
      args: statement.args ?? {},
    });
    return plan.rows.map((row) => String(row["detail"])).join("\n");
  } finally {
    await storage().client.execute("PRAGMA foreign_keys = ON");
  }
}

test("a batch walks the primary key and finds deliveries and attempts through their message_id indexes", async () => {
  await seedHistory(storage().client, 2_000);
  const [examined, ...deletes] = pruneStatements(request());
  expect(await explain(examined!)).toMatch(
    /SEARCH postel_messages USING COVERING INDEX sqlite_autoindex_postel_messages_1 \(id>\? AND id<\?\)/,
  );
  const indexes = [
    "postel_attempts_message",
    "postel_deliveries_message",
    "sqlite_autoindex_postel_messages_1",
  ];
  for (const [i, statement] of deletes.entries()) {
    const plan = await explain(statement);
    expect(plan).not.toMatch(/\bSCAN (postel_|m\b|d\b)/);
    expect(plan).toContain(
      `SEARCH ${["postel_attempts", "postel_deliveries", "postel_messages"][i]} USING COVERING INDEX ${indexes[i]}`,
    );
    expect(plan).toContain("postel_deliveries_message (message_id=?)"); // the NOT EXISTS check
  }
});

test("a health batch reads each endpoint's old buckets as a range of the primary key, never a scan of them all", async () => {
  const plan = await explain(pruneHealthStatement({ startedBefore: CUTOFF, limit: 500 }));
  expect(plan).toMatch(/SCAN e USING COVERING INDEX sqlite_autoindex_postel_endpoints_1/);
  expect(plan).toContain(
    "SEARCH h USING COVERING INDEX sqlite_autoindex_postel_endpoint_health_1 (endpoint_id=? AND bucket_start<?)",
  );
});

test("a pass over 20,000 finished messages deletes them all with every attempt and keeps the rest", async () => {
  await seedHistory(storage().client, 20_000);
  await storage().client.execute(
    `INSERT INTO postel_messages (id, type, payload, status, created_at) VALUES ('msg_0999999999', 't', '{}', 'pending', ${NOW})`,
  );
  const total = await pruneAll(storage(), CUTOFF, 1000);
  expect(total).toEqual({ messages: 20_000, deliveries: 20_000, attempts: 22_000, batches: 21 });
  const left = await storage().client.execute(
    `SELECT (SELECT count(*) FROM postel_messages) AS messages, (SELECT count(*) FROM postel_deliveries) AS deliveries,
       (SELECT count(*) FROM postel_attempts) AS attempts`,
  );
  expect({ ...left.rows[0] }).toEqual({ messages: 1, deliveries: 0, attempts: 0 });
});
