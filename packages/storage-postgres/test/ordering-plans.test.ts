import { randomUUID } from "node:crypto";
import type { ClaimedDelivery } from "@postel/core/storage";
import { newEndpoint, newMessage } from "@postel/core/storage/conformance";
import { expect, test } from "vitest";
import { PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import { migratedDatabase, truncatePostel } from "./support/database.js";

// As in plans.test.ts (issue 25): the keyed statements run with generic plans made once per
// connection, with the statistics of that moment. Made while the tables were empty, none may later
// read a key's finished history: the fan-out's order check reads messages_unfanned_key_idx, the
// settle statement and countWaiting read deliveries_key_open_idx, and no plan scans a whole table.

const db = migratedDatabase();

/** A node of auto_explain's JSON output (the fields read here). */
interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

function* nodesOf(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodesOf(child);
}

const KEYS = ["k0", "k1", "k2"];
const HISTORY = 3_000;
/** Far below the history's rows, above anything one round touches. */
const BOUND = 300;

/** Fans out two messages per key, holds k0 on its head's failure, skips it, and delivers the rest. */
async function round(storage: PostgresStorageInstance, endpointId: string, now: number): Promise<void> {
  const lease = { owner: "w", now, until: now + 60_000, limit: 100 };
  const messages = KEYS.flatMap((orderingKey) => [newMessage({ orderingKey }), newMessage({ orderingKey })]);
  await storage.batchSend.enqueueMany(messages, undefined);
  const claimed = await storage.claimFanout(lease);
  let due: ClaimedDelivery[] = await storage.recordFanout(
    claimed.map(({ message, token }) => ({
      messageId: message.id,
      token,
      orderingKey: message.orderingKey!,
      deliveries: [
        {
          id: `dlv_${randomUUID()}`,
          messageId: message.id,
          endpointId,
          webhookId: message.id,
          createdAt: now,
        },
      ].map((d) => ({ ...d, orderingKey: message.orderingKey! })),
    })),
    now,
    lease,
  );
  let held = false;
  while (due.length > 0) {
    await storage.recordOutcomes(
      due.map((c) => {
        const hold = !held && c.delivery.orderingKey === "k0";
        held ||= hold;
        return {
          deliveryId: c.delivery.id,
          leaseToken: c.leaseToken,
          transition: hold ? { kind: "dead-lettered" } : { kind: "succeeded" },
          orderingKey: c.delivery.orderingKey!,
          ...(hold && { holdKey: true as const }),
        };
      }),
      now,
    );
    // countWaiting is read by stats() on every refresh: enough calls for a generic plan.
    for (let i = 0; i < 6; i++) await storage.ordering.countWaiting({ cap: 1_000 });
    await storage.ordering.countWaiting({ endpointId, cap: 1_000 });
    if ((await storage.ordering.listHeldKeys({ limit: 10 })).length > 0) {
      await storage.ordering.skipHeldKey(endpointId, "k0", now);
    }
    due = await storage.claimDue(lease);
  }
}

/** A storage on one connection whose every statement's plan (auto_explain, analysed) lands in `plans`. */
function explainedStorage(): {
  storage: PostgresStorageInstance;
  plans: { query: string; plan: PlanNode }[];
} {
  const plans: { query: string; plan: PlanNode }[] = [];
  const workerSql = db.database.connect({
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
  return { storage: PostgresStorage({ sql: workerSql }, { migrate: false }), plans };
}

/** Every plan node of `plans` that scans a whole table or reads more than BOUND rows of one of `tables`. */
function offendersIn(plans: { query: string; plan: PlanNode }[], tables: readonly string[]): string[] {
  const offenders: string[] = [];
  for (const { query, plan } of plans) {
    for (const node of nodesOf(plan)) {
      const table = node["Relation Name"];
      if (table === undefined || !tables.includes(table)) continue;
      const read =
        ((node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0)) * (node["Actual Loops"] ?? 1);
      if (node["Node Type"] === "Seq Scan" || read > BOUND) {
        offenders.push(
          `${node["Node Type"]} on ${table}${node["Index Name"] ? ` using ${node["Index Name"]}` : ""} read ${read} ` +
            `rows in: ${query.replace(/\s+/g, " ").trim().slice(0, 120)}…`,
        );
      }
    }
  }
  return offenders;
}

test("the keyed statements read their partial indexes, never a key's history, under plans made while the tables were empty", async () => {
  const { sql } = db;
  await truncatePostel(sql);
  await sql`VACUUM ANALYZE postel.messages, postel.deliveries, postel.held_keys`;
  const { storage, plans } = explainedStorage();
  const endpoint = newEndpoint();
  await storage.createEndpoint(endpoint);
  const now = Date.now();
  // The plans are made now, on empty tables.
  await round(storage, endpoint.id, now);
  const early = plans.length;

  // Then each key gets a long finished history on the endpoint, under those same plans.
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at, finished_at, ordering_key)
    SELECT 'msg_h' || lpad(n::text, 6, '0'), 'order.created', '{}', 'dispatched', n, n, n, 'k' || (n % 3)
    FROM generate_series(1, ${HISTORY}) AS n`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at,
      updated_at, ordering_key)
    SELECT 'dlv_h' || lpad(n::text, 6, '0'), 'msg_h' || lpad(n::text, 6, '0'), ${endpoint.id}, 'wh_' || n,
      'succeeded', n, n, n, 'k' || (n % 3)
    FROM generate_series(1, ${HISTORY}) AS n`;
  await round(storage, endpoint.id, now + 1_000);
  await storage.close();

  const late = plans.slice(early);
  const indexesOf = (marker: string) => {
    const matching = late.filter((p) => p.query.includes(marker));
    expect(matching.length, `a statement with "${marker}" ran after the history grew`).toBeGreaterThan(0);
    return new Set(matching.flatMap((p) => [...nodesOf(p.plan)].map((node) => node["Index Name"])));
  };
  // The fan-out's order check (ORDERING_RULES.fanoutInOrder).
  expect(indexesOf("given AS")).toContain("messages_unfanned_key_idx");
  // The fan-out claim's clear check (ORDERING_RULES.directHead): three probes, none of a key's history.
  const clear = indexesOf("k.ordering_key = m.ordering_key");
  for (const index of ["messages_unfanned_key_idx", "messages_open_key_idx", "held_keys_key_idx"])
    expect(clear).toContain(index);
  // The settle statement, after a fan-out, an outcome and a skip.
  expect(indexesOf("(d.status = 'waiting') IS TRUE")).toContain("deliveries_key_open_idx");
  // countWaiting: per endpoint, a range of its waiting deliveries (either index bounds it to them).
  indexesOf("FROM postel.endpoints e");
  expect(offendersIn(late, ["messages", "deliveries"])).toEqual([]);
}, 120_000);

// Issue 30's failing endpoint: its keys' heads retry and everything after them waits, so its open
// deliveries, its keys' unfinished messages and (with onKeyFailure "hold") its held keys grow with
// the outage. The probes of other keys' statements must stay probes of their own pairs. Planned on
// small tables, a NOT EXISTS over an equality became a hashed subplan that read every open keyed
// delivery of every endpoint once per fan-out (2,000 rows per call by the end of the bench's run).
const OPEN = 2_400;
const HELD = 600;

test("a backlog of other keys' open deliveries, unfinished messages and holds is never read by a key's statements", async () => {
  const { sql } = db;
  await truncatePostel(sql);
  await sql`VACUUM ANALYZE postel.messages, postel.deliveries, postel.held_keys`;
  const { storage, plans } = explainedStorage();
  const healthy = newEndpoint();
  const failing = newEndpoint();
  await storage.createEndpoint(healthy);
  await storage.createEndpoint(failing);
  const now = Date.now();
  // The plans are made now, on small tables.
  await round(storage, healthy.id, now);
  const early = plans.length;

  // The failing endpoint's backlog: 200 keys, each a retrying head and the rest waiting behind it,
  // their messages fanned out and unfinished; and keys held on it.
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at, ordering_key)
    SELECT 'msg_o' || lpad(n::text, 6, '0'), 'order.created', '{}', 'pending', n, n, 'o' || (n % 200)
    FROM generate_series(1, ${OPEN}) AS n`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at,
      updated_at, ordering_key)
    SELECT 'dlv_o' || lpad(n::text, 6, '0'), 'msg_o' || lpad(n::text, 6, '0'), ${failing.id}, 'wh_o' || n,
      CASE WHEN n <= 200 THEN 'pending' ELSE 'waiting' END, ${now + 3_600_000}::bigint, n, n, 'o' || (n % 200)
    FROM generate_series(1, ${OPEN}) AS n`;
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at, finished_at, ordering_key)
    SELECT 'msg_x' || lpad(n::text, 6, '0'), 'order.created', '{}', 'dead-lettered', n, n, n, 'h' || n
    FROM generate_series(1, ${HELD}) AS n`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at,
      updated_at, ordering_key)
    SELECT 'dlv_x' || lpad(n::text, 6, '0'), 'msg_x' || lpad(n::text, 6, '0'), ${failing.id}, 'wh_x' || n,
      'dead-lettered', n, n, n, 'h' || n
    FROM generate_series(1, ${HELD}) AS n`;
  await sql`
    INSERT INTO postel.held_keys (endpoint_id, ordering_key, delivery_id, held_at)
    SELECT ${failing.id}, 'h' || n, 'dlv_x' || lpad(n::text, 6, '0'), n FROM generate_series(1, ${HELD}) AS n`;
  await round(storage, healthy.id, now + 1_000);
  await storage.close();

  const late = plans.slice(early);
  for (const marker of ["given AS", "k.ordering_key = m.ordering_key", "(d.status = 'waiting') IS TRUE"]) {
    const ran = late.some((p) => p.query.includes(marker));
    expect(ran, `a statement with "${marker}" ran after the backlog grew`).toBe(true);
  }
  // countWaiting counts up to its cap by design (the round asks for 1,000): it is not a key's statement.
  const keyed = late.filter((p) => !p.query.includes("FROM postel.endpoints e"));
  expect(offendersIn(keyed, ["messages", "deliveries", "held_keys"])).toEqual([]);
}, 120_000);
