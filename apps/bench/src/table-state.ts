import { Postel } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import type { Sql } from "postgres";
import type { BenchDatabase } from "./database.js";
import { PAYLOAD } from "./database.js";

/**
 * Issue 25's table states, in which a drain behaved very differently: the messages come in through
 * `send()` from concurrent callers, as an application's do (ids and `created_at` spread over the
 * seconds they took), then
 *
 * - `analysed`: `VACUUM ANALYZE`, the planner's statistics describe them;
 * - `unanalysed`: no statistics at all (a fresh install: autovacuum is turned off on Postel's tables
 *   so that it cannot analyse them halfway through the drain);
 * - `history`: beside a long history of finished messages and deliveries (1,000,000 in a full run),
 *   then `VACUUM ANALYZE`.
 */
export type TableState = "analysed" | "unanalysed" | "history";

/** Every state, in the order the scenarios run them. */
export const TABLE_STATES: readonly TableState[] = ["analysed", "unanalysed", "history"];

/** How a state is named in the tables. */
export function describeState(state: TableState, history: number): string {
  if (state === "analysed") return "after VACUUM ANALYZE";
  if (state === "unanalysed") return "never analysed";
  return `beside ${history.toLocaleString("en-US")} finished`;
}

/** The tenant of every message and of the endpoint with `--tenant`. */
export const BENCH_TENANT = "tenant_bench";

/** `{ tenantId }` with `--tenant` (which sets POSTEL_BENCH_TENANT), else nothing. */
export function tenantOf(): { tenantId?: string } {
  const tenantId = process.env["POSTEL_BENCH_TENANT"];
  return tenantId ? { tenantId } : {};
}

/** Callers of `send()` at once while the messages are enqueued (issue 25's harness). */
const SENDERS = 32;

/** The Postel tables a state's statistics are about. */
const TABLES = ["messages", "deliveries", "attempts", "endpoint_health"];

/**
 * Puts `database` (migrated, its endpoints created) in `state` with `messages` pending messages
 * enqueued by `send()`. Only Postel's public API writes the pending messages; the history is copied
 * from finished rows Postel wrote (see seedFinished), so the same code builds the state for any
 * commit's library (`--baseline`).
 */
export async function prepareTableState(
  database: BenchDatabase,
  state: TableState,
  messages: number,
  history: number,
  log: (line: string) => void,
): Promise<void> {
  const { sql } = database;
  if (state === "unanalysed") {
    for (const table of await postelTables(sql)) {
      await sql.unsafe(`ALTER TABLE postel.${table} SET (autovacuum_enabled = false)`);
    }
  }
  if (state === "history") await seedFinished(database, history, log);
  await sendConcurrently(database.url, messages);
  if (state !== "unanalysed") await sql`VACUUM ANALYZE`;
}

/** Which of Postel's tables this library's schema has. */
async function postelTables(sql: Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = 'postel' AND table_type = 'BASE TABLE' AND table_name = ANY(${TABLES})`;
  return rows.map((row) => row.name);
}

/** `count` messages through `send()`, from SENDERS callers at once, each waiting for its last. */
export async function sendConcurrently(url: string, count: number): Promise<void> {
  const postel = Postel({
    outbound: { storage: PostgresStorage({ url }, { migrate: false }), http: { allowPrivateNetworks: true } },
  });
  const data = JSON.parse(PAYLOAD) as Record<string, unknown>;
  const tenant = tenantOf();
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        while (next < count) {
          next++;
          await postel.outbound.send({ type: "order.created", data, ...tenant });
        }
      }),
    );
  } finally {
    await postel.close();
  }
}

/** Messages Postel delivers for real before they are copied (seedFinished). */
const TEMPLATE = 1_000;

/** Columns that hold a row's own key or a key of another Postel row: a copy gets a suffix on them. */
const KEY_COLUMNS = new Set([
  "id",
  "message_id",
  "delivery_id",
  "webhook_id",
  "first_attempt_id",
  "attempt_id",
]);

/**
 * About `count` finished messages, each with its succeeded delivery: TEMPLATE messages are sent and
 * delivered by a Postel worker in this process to the scenario's endpoint, then every row of Postel's
 * message, delivery and attempt tables is copied until there are `count`, each copy's keys suffixed
 * (`msg_…_0001`: it sorts right after its original, so the history stays older than what is sent
 * after it). Column lists come from the schema, so any commit's schema works.
 */
async function seedFinished(database: BenchDatabase, count: number, log: (line: string) => void) {
  const { sql, url } = database;
  const started = Date.now();
  const postel = Postel({
    outbound: { storage: PostgresStorage({ url }, { migrate: false }), http: { allowPrivateNetworks: true } },
  });
  try {
    const data = JSON.parse(PAYLOAD) as Record<string, unknown>;
    for (let i = 0; i < TEMPLATE; i += 500) {
      await postel.outbound.sendBatch(
        Array.from({ length: Math.min(500, TEMPLATE - i) }, () => ({
          type: "order.created",
          data,
          ...tenantOf(),
        })),
      );
    }
    await postel.start();
    for (;;) {
      const [row] = await sql<{ open: number }[]>`
        SELECT count(*)::int AS open FROM postel.messages WHERE finished_at IS NULL`;
      if (row!.open === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await postel.close();
  }
  const copies = Math.ceil(count / TEMPLATE) - 1;
  for (const table of ["messages", "deliveries", "attempts"]) {
    const columns = await sql<{ name: string }[]>`
      SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = 'postel' AND table_name = ${table} AND is_generated = 'NEVER'
      ORDER BY ordinal_position`;
    if (columns.length === 0) continue;
    const list = columns.map(({ name }) => `"${name}"`).join(", ");
    const values = columns
      .map(({ name }) => (KEY_COLUMNS.has(name) ? `"${name}" || '_' || lpad(g::text, 4, '0')` : `"${name}"`))
      .join(", ");
    // A few hundred thousand rows a statement: progress, and no single transaction of millions.
    for (let from = 1; from <= copies; from += 100) {
      const to = Math.min(copies, from + 99);
      // Originals only (one "_", after the prefix): never a copy of a copy.
      await sql.unsafe(
        `INSERT INTO postel.${table} (${list}) SELECT ${values} FROM postel.${table}
         CROSS JOIN generate_series(${from}, ${to}) AS g WHERE id NOT LIKE '%\\_%\\_%'`,
      );
    }
    log(`  history: ${table} copied ×${copies + 1} (${Math.round((Date.now() - started) / 1000)} s)`);
  }
}
