import type { PendingQuery, Row } from "postgres";
import { beforeEach, describe, expect, test } from "vitest";
import { PostgresStorage } from "../src/index.js";
import { ClaimFloor, FLOOR_MS, type FloorKey, INDEX_START } from "../src/internal/claim-floor.js";
import { claimDueStatement } from "../src/delivery/claim.js";
import { claimFanoutStatement } from "../src/delivery/fanout.js";
import { migratedDatabase, truncatePostel } from "./support/database.js";
import { newMessage } from "./support/messages.js";

const NOW = Date.UTC(2026, 0, 1);
const START = INDEX_START;
const at = (time: number, id: string): FloorKey => ({ at: time, id });

interface PlanNode {
  "Index Name"?: string;
  "Shared Hit Blocks": number;
  "Shared Read Blocks": number;
  Plans?: PlanNode[];
}

function findNode(node: PlanNode, match: (node: PlanNode) => boolean): PlanNode | undefined {
  if (match(node)) return node;
  for (const child of node.Plans ?? []) {
    const found = findNode(child, match);
    if (found) return found;
  }
  return undefined;
}

describe("ClaimFloor", () => {
  test("a full batch moves the floor to its last message; a partial one sends the next claim back to the start", () => {
    const floor = new ClaimFloor();
    expect(floor.from(NOW)).toEqual(START);
    floor.after(NOW, [at(1, "m1"), at(2, "m2")], 2);
    expect(floor.from(NOW)).toEqual(at(2, "m2"));
    floor.after(NOW, [at(3, "m3")], 2);
    expect(floor.from(NOW)).toEqual(START);
    floor.after(NOW, [], 2);
    expect(floor.from(NOW)).toEqual(START);
  });

  test("a floor stands for FLOOR_MS from when it was first set, however often full batches move it", () => {
    const floor = new ClaimFloor();
    floor.after(NOW, [at(1, "m1")], 1);
    floor.after(NOW + FLOOR_MS - 1, [at(2, "m2")], 1);
    expect(floor.from(NOW + FLOOR_MS - 1)).toEqual(at(2, "m2"));
    expect(floor.from(NOW + FLOOR_MS)).toEqual(START);
    // The claim made from the start sets a fresh floor.
    floor.after(NOW + FLOOR_MS, [at(3, "m3")], 1);
    expect(floor.from(NOW + 2 * FLOOR_MS - 1)).toEqual(at(3, "m3"));
  });

  test("a clock that moved backwards scans from the start", () => {
    const floor = new ClaimFloor();
    floor.after(NOW, [at(1, "m1")], 1);
    expect(floor.from(NOW - 1)).toEqual(START);
  });
});

describe("claims from the floor", () => {
  const db = migratedDatabase();
  beforeEach(() => truncatePostel(db.sql));
  const lease = (now: number, limit: number) => ({ owner: "w", now, until: now + 60_000, limit });

  // Pages the claim's index scan reads (EXPLAIN ANALYZE runs the claim: it is rolled back).
  async function indexBlocks(statement: PendingQuery<Row[]>, index: string): Promise<number> {
    const connection = await db.sql.reserve();
    try {
      await connection`BEGIN`;
      const [row] = await connection`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`;
      await connection`ROLLBACK`;
      const scan = findNode(row!["QUERY PLAN"][0].Plan as PlanNode, (node) => node["Index Name"] === index);
      if (!scan) throw new Error(`the claim's plan does not scan ${index}`);
      return scan["Shared Hit Blocks"] + scan["Shared Read Blocks"];
    } finally {
      connection.release();
    }
  }

  // Rows done leave dead entries at the front of the claim index until VACUUM. Scanning from the floor
  // skips them instead of walking every one on every claim. (Twice from the start: the first scan also
  // marks the dead entries it meets, PostgreSQL's kill hints.)
  test("a fan-out claim from the floor reads a fraction of the index pages one from the start reads", async () => {
    const { sql } = db;
    await sql`
      INSERT INTO postel.messages (id, type, payload, status, created_at)
      SELECT 'msg_' || lpad(i::text, 8, '0'), 'order.created', '{}', 'pending', ${NOW}::bigint + i
      FROM generate_series(1, 30000) AS i`;
    await sql`
      UPDATE postel.messages SET fanned_out_at = ${NOW}, status = 'dispatched', finished_at = ${NOW}
      WHERE created_at <= ${NOW + 25_000}`;
    const blocks = (from: FloorKey) =>
      indexBlocks(claimFanoutStatement(sql, lease(NOW, 10), from), "messages_fanout_due_idx");
    await blocks(START);
    const fromStart = await blocks(START);
    const fromFloor = await blocks(at(NOW + 25_000, "msg_00025000"));
    expect(fromStart).toBeGreaterThan(10 * fromFloor);
  });

  test("a retry claim from the floor reads a fraction of the index pages one from the start reads", async () => {
    const { sql } = db;
    await sql`
      INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at)
      VALUES ('msg_1', 'order.created', '{}', 'pending', ${NOW}, ${NOW})`;
    await sql`
      INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at,
        created_at, updated_at)
      SELECT 'dlv_' || lpad(i::text, 8, '0'), 'msg_1', 'ep_1', 'msg_1', 'pending', ${NOW}::bigint + i,
        ${NOW}, ${NOW}
      FROM generate_series(1, 30000) AS i`;
    await sql`
      UPDATE postel.deliveries SET status = 'succeeded' WHERE next_attempt_at <= ${NOW + 25_000}`;
    const blocks = (from: FloorKey) =>
      // Due now: the 20 after the floor (the rest are not due yet), whatever scan the planner picks.
      indexBlocks(claimDueStatement(sql, lease(NOW + 25_020, 10), from), "deliveries_due_idx");
    await blocks(START);
    const fromStart = await blocks(START);
    const fromFloor = await blocks(at(NOW + 25_000, "dlv_00025000"));
    expect(fromStart).toBeGreaterThan(10 * fromFloor);
  });

  test("work behind the floor is claimed once the floor lapses: an expired lease, a late commit", async () => {
    const storage = PostgresStorage({ sql: db.sql }, { migrate: false });
    const messages = [1, 2, 3, 4].map((i) => newMessage({ id: `msg_${i}`, createdAt: NOW + i }));
    for (const message of messages) await storage.enqueue(message);
    // Two full batches: the floor is at msg_4.
    expect((await storage.claimFanout(lease(NOW, 2))).map((c) => c.message.id)).toEqual(["msg_1", "msg_2"]);
    expect((await storage.claimFanout(lease(NOW, 2))).map((c) => c.message.id)).toEqual(["msg_3", "msg_4"]);
    // A message committed late, older than the floor, waits until the floor lapses.
    await storage.enqueue(newMessage({ id: "msg_0", createdAt: NOW }));
    expect(await storage.claimFanout(lease(NOW + FLOOR_MS - 1, 2))).toEqual([]);
    expect((await storage.claimFanout(lease(NOW + FLOOR_MS, 2))).map((c) => c.message.id)).toEqual(["msg_0"]);
    // Leases that expired behind the floor are claimed again, oldest first.
    const later = NOW + 60_000;
    expect((await storage.claimFanout(lease(later, 10))).map((c) => c.message.id)).toEqual([
      "msg_1",
      "msg_2",
      "msg_3",
      "msg_4",
    ]);
  });

  test("retries behind the floor are claimed once it lapses", async () => {
    const storage = PostgresStorage({ sql: db.sql }, { migrate: false });
    await storage.enqueue(newMessage({ id: "msg_1", createdAt: NOW }));
    const [claim] = await storage.claimFanout(lease(NOW, 1));
    const deliveries = [1, 2, 3, 4, 5].map((i) => ({
      id: `dlv_${i}`,
      messageId: "msg_1",
      endpointId: `ep_${i}`,
      webhookId: "msg_1",
      createdAt: NOW,
    }));
    await storage.recordFanout([{ messageId: "msg_1", token: claim!.token, deliveries }], NOW);
    // Two full batches: the floor is at dlv_4.
    const ids = async (now: number, limit: number) =>
      (await storage.claimDue(lease(now, limit))).map((c) => c.delivery.id);
    expect(await ids(NOW, 2)).toEqual(["dlv_1", "dlv_2"]);
    expect(await ids(NOW, 2)).toEqual(["dlv_3", "dlv_4"]);
    expect(await ids(NOW, 2)).toEqual(["dlv_5"]);
    // Leases expired: every delivery is due again, and the floor has lapsed.
    expect(await ids(NOW + 60_000, 10)).toEqual(["dlv_1", "dlv_2", "dlv_3", "dlv_4", "dlv_5"]);
  });
});
