import { beforeEach, describe, expect, test } from "vitest";
import { PostgresStorage } from "../src/index.js";
import { claimFanoutStatement, FanoutFloor, FLOOR_MS } from "../src/queries/fanout.js";
import { migratedDatabase, truncatePostel } from "./support/database.js";
import { newMessage } from "./support/messages.js";

const NOW = Date.UTC(2026, 0, 1);
const START = { createdAt: -1, id: "" };
const at = (createdAt: number, id: string) => ({ createdAt, id });

interface PlanNode {
  "Index Name"?: string;
  "Shared Hit Blocks": number;
  "Shared Read Blocks": number;
  Plans?: PlanNode[];
}

class Rollback extends Error {
  constructor(readonly plan: PlanNode) {
    super("rollback");
  }
}

function findNode(node: PlanNode, match: (node: PlanNode) => boolean): PlanNode {
  if (match(node)) return node;
  for (const child of node.Plans ?? []) {
    try {
      return findNode(child, match);
    } catch {}
  }
  throw new Error("no such plan node");
}

describe("FanoutFloor", () => {
  test("a full batch moves the floor to its last message; a partial one sends the next claim back to the start", () => {
    const floor = new FanoutFloor();
    expect(floor.from(NOW)).toEqual(START);
    floor.after(NOW, [at(1, "m1"), at(2, "m2")], 2);
    expect(floor.from(NOW)).toEqual(at(2, "m2"));
    floor.after(NOW, [at(3, "m3")], 2);
    expect(floor.from(NOW)).toEqual(START);
    floor.after(NOW, [], 2);
    expect(floor.from(NOW)).toEqual(START);
  });

  test("a floor stands for FLOOR_MS from when it was first set, however often full batches move it", () => {
    const floor = new FanoutFloor();
    floor.after(NOW, [at(1, "m1")], 1);
    floor.after(NOW + FLOOR_MS - 1, [at(2, "m2")], 1);
    expect(floor.from(NOW + FLOOR_MS - 1)).toEqual(at(2, "m2"));
    expect(floor.from(NOW + FLOOR_MS)).toEqual(START);
    // The claim made from the start sets a fresh floor.
    floor.after(NOW + FLOOR_MS, [at(3, "m3")], 1);
    expect(floor.from(NOW + 2 * FLOOR_MS - 1)).toEqual(at(3, "m3"));
  });

  test("a clock that moved backwards scans from the start", () => {
    const floor = new FanoutFloor();
    floor.after(NOW, [at(1, "m1")], 1);
    expect(floor.from(NOW - 1)).toEqual(START);
  });
});

describe("claims from the floor", () => {
  const db = migratedDatabase();
  beforeEach(() => truncatePostel(db.sql));
  const lease = (now: number, limit: number) => ({ owner: "w", now, until: now + 60_000, limit });

  // Each message fanned out leaves dead entries at the front of messages_fanout_due_idx until VACUUM.
  // Scanning from the floor skips them instead of walking every one on every claim.
  test("a claim from the floor reads a fraction of the index pages a claim from the start reads", async () => {
    const { sql } = db;
    await sql`
      INSERT INTO postel.messages (id, type, payload, status, created_at)
      SELECT 'msg_' || lpad(i::text, 8, '0'), 'order.created', '{}', 'pending', ${NOW}::bigint + i
      FROM generate_series(1, 30000) AS i`;
    await sql`
      UPDATE postel.messages SET fanned_out_at = ${NOW}, status = 'dispatched', finished_at = ${NOW}
      WHERE created_at <= ${NOW + 25_000}`;
    // Pages the index scan of the claim reads (EXPLAIN ANALYZE runs the claim: roll it back).
    const indexBlocks = async (from: { createdAt: number; id: string }) => {
      const plan = await sql
        .begin(async (tx) => {
          const [row] = await tx`
            EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${claimFanoutStatement(tx as never, lease(NOW, 10), from)}`;
          throw new Rollback(row!["QUERY PLAN"][0].Plan as PlanNode);
        })
        .catch((error: unknown) => {
          if (error instanceof Rollback) return error.plan;
          throw error;
        });
      const scan = findNode(plan, (node) => node["Index Name"] === "messages_fanout_due_idx");
      return scan["Shared Hit Blocks"] + scan["Shared Read Blocks"];
    };
    // Twice from the start: the first scan also marks the dead entries it meets (kill hints).
    await indexBlocks(START);
    const fromStart = await indexBlocks(START);
    const fromFloor = await indexBlocks(at(NOW + 25_000, "msg_00025000"));
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
});
