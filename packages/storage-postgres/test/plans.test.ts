import { Postel } from "@postel/core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { PostgresStorage } from "../src/index.js";
import { migratedDatabase, truncatePostel } from "./support/database.js";
import { eventually } from "./support/outbox.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";

// Issue 25: the worker's statements run with generic plans, made once per connection with the
// statistics of that moment and kept. Made while the deliveries table was empty and analysed (a fresh
// install, or the drain of issue 25's harness after its VACUUM ANALYZE), the outcome statement's plan
// reached the deliveries by a full scan of their primary key at every batch, and kept doing so as the
// table grew: PostgreSQL's CPU per delivery doubled. Every plan the worker's connection runs is logged
// here (auto_explain, at NOTICE level, on that connection only), and none may read more than a batch's
// worth of rows of a Postel table, however large the table has grown since the plan was made.

const db = migratedDatabase();
let receiver: TestReceiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

/** A node of auto_explain's JSON output (the fields read here). */
interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Join Filter"?: number;
  Plans?: PlanNode[];
}

interface LoggedPlan {
  query: string;
  plan: PlanNode;
}

function* nodesOf(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodesOf(child);
}

/** The rows a scan node read from its table: those it returned and those its filter removed, per loop. */
function rowsRead(node: PlanNode): number {
  const loops = node["Actual Loops"] ?? 1;
  return ((node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0)) * loops;
}

const TABLES = new Set(["messages", "deliveries", "attempts"]);
/** Far below the rows in the tables by then (3,100 of each), above any batch the worker makes. */
const BOUND = 600;

test("no plan the worker runs reads more than a batch of a table's rows, though it was made while the table was empty", async () => {
  const { sql, database } = db;
  await truncatePostel(sql);
  // The trap: statistics saying the tables are empty, as after a VACUUM ANALYZE of a fresh install.
  await sql`VACUUM ANALYZE postel.messages, postel.deliveries, postel.attempts`;

  const plans: LoggedPlan[] = [];
  // One connection: the plans it makes while the tables are empty are the ones it keeps running.
  const workerSql = database.connect({
    max: 1,
    connection: {
      session_preload_libraries: "auto_explain",
      "auto_explain.log_min_duration": "0",
      "auto_explain.log_analyze": "on",
      "auto_explain.log_format": "json",
      "auto_explain.log_level": "notice",
    },
    onnotice: (notice) => {
      const message = String(notice["message"] ?? "");
      if (!message.includes("plan:")) return;
      const parsed = JSON.parse(message.slice(message.indexOf("{"))) as {
        "Query Text": string;
        Plan: PlanNode;
      };
      plans.push({ query: parsed["Query Text"], plan: parsed.Plan });
    },
  });
  const postel = Postel({
    outbound: {
      storage: PostgresStorage({ sql: workerSql }, { migrate: false }),
      http: { allowPrivateNetworks: true },
    },
  });
  try {
    await postel.outbound.endpoints.create({ url: receiver.url, types: ["order.*"] });
    // An endpoint with a limit: its work is claimed by claimLimited, a transaction of its own.
    await postel.outbound.endpoints.create({ url: receiver.url, types: ["limited.*"], maxInFlight: 4 });
    await postel.start();
    // A first drain while the tables are (nearly) empty: the plans are made now.
    const first = await postel.outbound.sendBatch([
      ...Array.from({ length: 100 }, (_, i) => ({ type: "order.created", data: { i } })),
      ...Array.from({ length: 20 }, (_, i) => ({ type: "limited.created", data: { i } })),
    ]);
    await eventually(
      "the first 120 delivered",
      () => first.every((m) => receiver.delivered.has(m.id)),
      60_000,
    );
    const early = plans.length;
    // Then the tables grow to 3,100 rows each, under those same plans.
    const ids: string[] = [];
    for (let i = 0; i < 3_000; i += 500) {
      const batch = Array.from({ length: 500 }, (_, j) => ({
        type: j % 10 === 0 ? "limited.created" : "order.created",
        data: { i: i + j },
      }));
      ids.push(...(await postel.outbound.sendBatch(batch)).map((m) => m.id));
    }
    await eventually("3,000 more delivered", () => ids.every((id) => receiver.delivered.has(id)), 120_000);
    await eventually(
      "every outcome recorded",
      async () => {
        const [row] = await sql<{ open: number }[]>`
          SELECT count(*)::int AS open FROM postel.messages WHERE finished_at IS NULL`;
        return row!.open === 0;
      },
      60_000,
    );
    expect(early).toBeGreaterThan(0);

    const late = plans.slice(early);
    const outcomes = late.filter(
      (p) => p.query.includes("json_to_recordset") && p.query.includes("changed AS"),
    );
    const claims = late.filter((p) => p.query.includes("FOR UPDATE SKIP LOCKED"));
    const limitedClaims = late.filter((p) => p.query.includes("endpoint_rate_buckets"));
    expect(outcomes.length, "the outcome statement ran after the tables grew").toBeGreaterThan(0);
    expect(claims.length, "the claim statement ran after the tables grew").toBeGreaterThan(0);
    expect(limitedClaims.length, "the limited endpoint's claim ran after the tables grew").toBeGreaterThan(0);
    const offenders: string[] = [];
    for (const { query, plan } of late) {
      for (const node of nodesOf(plan)) {
        const table = node["Relation Name"];
        if (table === undefined || !TABLES.has(table)) continue;
        if (node["Node Type"] === "Seq Scan" || rowsRead(node) > BOUND) {
          offenders.push(
            `${node["Node Type"]} on ${table}${node["Index Name"] ? ` using ${node["Index Name"]}` : ""} read ` +
              `${rowsRead(node)} rows in: ${query.replace(/\s+/g, " ").trim().slice(0, 120)}…`,
          );
        }
      }
    }
    expect(offenders).toEqual([]);
  } finally {
    await postel.close();
  }
}, 300_000);
