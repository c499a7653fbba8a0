import { beforeEach, expect, test } from "vitest";
import { PostgresStorage } from "../src/index.js";
import { INDEX_START } from "../src/internal/claim-floor.js";
import { claimDueStatement } from "../src/delivery/claim.js";
import { claimFanoutStatement } from "../src/delivery/fanout.js";
import { migratedDatabase, truncatePostel } from "./support/database.js";

const NOW = Date.UTC(2026, 0, 1);

const db = migratedDatabase();
beforeEach(() => truncatePostel(db.sql));

// One message with `count` deliveries, the first `due` of them pending and due, the rest succeeded.
async function seed(count: number, due: number): Promise<void> {
  const { sql } = db;
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at)
    VALUES ('msg_1', 'order.created', '{}', 'pending', ${NOW}, ${NOW})`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at, updated_at)
    SELECT 'dlv_' || lpad(n::text, 7, '0'), 'msg_1', 'ep_1', 'wh_' || n,
      CASE WHEN n <= ${due} THEN 'pending' ELSE 'succeeded' END, ${NOW}::bigint - n, ${NOW}, ${NOW}
    FROM generate_series(1, ${count}) AS n`;
  await sql`ANALYZE postel.deliveries`;
}

test("4 workers on separate pools claiming concurrently never get the same delivery twice", async () => {
  await seed(400, 400);
  const workers = Array.from({ length: 4 }, (_, i) => ({
    storage: PostgresStorage({ sql: db.database.connect({ max: 2 }) }, { migrate: false }),
    owner: `worker-${i}`,
  }));
  const claimAll = async ({ storage, owner }: (typeof workers)[number]) => {
    const ids: string[] = [];
    for (;;) {
      const batch = await storage.claimDue({ owner, now: NOW, until: NOW + 60_000, limit: 7 });
      if (batch.length === 0) return ids;
      ids.push(...batch.map((claimed) => claimed.delivery.id));
    }
  };
  const perWorker = await Promise.all(workers.map(claimAll));
  const all = perWorker.flat();
  expect(new Set(all).size).toBe(all.length);
  expect(all).toHaveLength(400);
  // Every worker took part: the rows were spread by SKIP LOCKED, not serialised behind one claimer.
  expect(perWorker.filter((ids) => ids.length > 0).length).toBeGreaterThan(1);
});

test("the claim walks the partial index deliveries_due_idx beside 100k terminal deliveries", async () => {
  await seed(100_010, 10);
  const lease = { owner: "w", now: NOW, until: NOW + 60_000, limit: 10 };
  const { sql } = db;
  const plan = await sql`EXPLAIN ${claimDueStatement(sql, lease)}`;
  const text = plan.map((row) => row["QUERY PLAN"]).join("\n");
  expect(text).toContain("deliveries_due_idx");

  const storage = PostgresStorage({ sql }, { migrate: false });
  const claimed = await storage.claimDue(lease);
  expect(claimed).toHaveLength(10);
});

// Planned against a table of a few thousand rows, a claim that joined its CTE of picked ids back to the
// table hash-joined a sequential scan of every row, at every claim. The ids are also given as an array,
// which the planner looks up in the primary key.
test("the claims look their rows up by primary key, never by scanning the table", async () => {
  const { sql } = db;
  await seed(3_000, 3_000);
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at)
    SELECT 'msg_p' || lpad(n::text, 7, '0'), 'order.created', '{}', 'pending', ${NOW}::bigint + n
    FROM generate_series(1, 3000) AS n`;
  await sql`ANALYZE postel.messages`;
  const lease = { owner: "w", now: NOW, until: NOW + 60_000, limit: 64 };
  for (const statement of [
    claimDueStatement(sql, lease),
    claimFanoutStatement(sql, { ...lease, newest: { since: NOW, limit: 16 } }, INDEX_START),
  ]) {
    const plan = (await sql`EXPLAIN ${statement}`).map((row) => row["QUERY PLAN"]).join("\n");
    expect(plan).not.toContain("Seq Scan");
    expect(plan).toMatch(/Index Scan using (messages|deliveries)_pkey/);
  }
});
