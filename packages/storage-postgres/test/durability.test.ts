import { readFile } from "node:fs/promises";
import type { Sql } from "postgres";
import { expect, test } from "vitest";
import { claimDueStatement } from "../src/delivery/claim.js";
import { INDEX_START } from "../src/internal/claim-floor.js";
import { claimFanoutStatement } from "../src/delivery/fanout.js";
import { migratedDatabase } from "./support/database.js";

const DAY = 24 * 3_600_000;
const db = migratedDatabase();

const lease = { owner: "w", now: Date.now(), until: Date.now() + 60_000, limit: 10 };

async function synchronousCommitAfter(claim: (tx: Sql) => Promise<unknown>): Promise<string> {
  return db.sql.begin(async (tx) => {
    await claim(tx as unknown as Sql);
    const [row] = await tx<{ synchronous_commit: string }[]>`SHOW synchronous_commit`;
    return row!.synchronous_commit;
  });
}

// A claim only writes leases: losing one in a crash makes the work due again. So claims skip the
// WAL flush, for their own transaction only; everything else commits as the server is configured.
test("claims commit with synchronous_commit off, for their own transaction only", async () => {
  // Both claims run their statement in a pipelined transaction of their own: test the statements here.
  expect(await synchronousCommitAfter((tx) => claimFanoutStatement(tx, lease, INDEX_START))).toBe("off");
  expect(await synchronousCommitAfter((tx) => claimDueStatement(tx, lease, INDEX_START))).toBe("off");
  expect(await synchronousCommitAfter(async () => {})).toBe("on");
  const [row] = await db.sql<{ synchronous_commit: string }[]>`SHOW synchronous_commit`;
  expect(row!.synchronous_commit).toBe("on");
});

// deliveries.message_id has no foreign key (nothing cascades), so the README documents how to prune a
// message with its deliveries and attempts. This runs the README's own statements.
test("the README's pruning statements delete old finished messages with their deliveries and attempts, nothing else", async () => {
  const { sql } = db;
  const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
  const prune = /To prune history[\s\S]*?```sql\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(prune).toContain("DELETE FROM postel.deliveries");
  const now = Date.now();
  const rows = [
    { id: "old", finishedAt: now - 40 * DAY },
    { id: "recent", finishedAt: now - DAY },
    { id: "pending", finishedAt: null },
  ];
  for (const { id, finishedAt } of rows) {
    const created = finishedAt ?? now;
    await sql`
      INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at, finished_at)
      VALUES (${`msg_${id}`}, 'order.created', '{}', ${finishedAt === null ? "pending" : "dispatched"},
        ${created}, ${created}, ${finishedAt})`;
    await sql`
      INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at,
        created_at, updated_at)
      VALUES (${`dlv_${id}`}, ${`msg_${id}`}, 'ep_1', ${`msg_${id}`},
        ${finishedAt === null ? "pending" : "succeeded"}, ${created}, ${created}, ${created})`;
    await sql`
      INSERT INTO postel.attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
        started_at, latency_ms, outcome, status_code)
      VALUES (${`att_${id}`}, ${`dlv_${id}`}, ${`msg_${id}`}, 'ep_1', ${`msg_${id}`}, 1, ${created}, 3,
        'success', 200)`;
  }

  // As a user would run it: several statements on one connection (postgres.js wants BEGIN on a reserved one).
  const connection = await sql.reserve();
  await connection.unsafe(prune!).simple();
  connection.release();

  const left = async (table: string, column: string) =>
    (
      await sql<{ id: string }[]>`SELECT ${sql(column)} AS id FROM ${sql("postel")}.${sql(table)} ORDER BY 1`
    ).map((row) => row.id);
  expect(await left("messages", "id")).toEqual(["msg_pending", "msg_recent"]);
  expect(await left("deliveries", "message_id")).toEqual(["msg_pending", "msg_recent"]);
  expect(await left("attempts", "message_id")).toEqual(["msg_pending", "msg_recent"]);
});
