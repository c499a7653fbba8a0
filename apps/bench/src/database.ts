import { randomUUID } from "node:crypto";
import { migrate } from "@postel/storage-postgres";
import postgres, { type Sql } from "postgres";

/** The server the bench runs against; override with POSTEL_BENCH_POSTGRES_URL. */
export const SERVER_URL =
  process.env["POSTEL_BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

/** A fresh database for one run, migrated for Postel and holding the naive baseline's table. */
export interface BenchDatabase {
  url: string;
  name: string;
  sql: Sql;
  drop(): Promise<void>;
}

/** Creates and migrates a throwaway database (`postel_bench_<random>`). */
export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `postel_bench_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const explainMs = process.env["BENCH_AUTO_EXPLAIN_MS"];
  if (explainMs) {
    // Diagnostics: log the plan of every statement slower than this to the server log.
    await admin.unsafe(`ALTER DATABASE ${name} SET session_preload_libraries = 'auto_explain'`);
    await admin.unsafe(`ALTER DATABASE ${name} SET auto_explain.log_min_duration = ${Number(explainMs)}`);
    await admin.unsafe(`ALTER DATABASE ${name} SET auto_explain.log_analyze = on`);
  }
  const sql = postgres(url.toString(), { max: 4, onnotice: () => {} });
  await migrate(sql);
  await sql.unsafe(`
    CREATE SCHEMA naive;
    CREATE TABLE naive.outbox (
      id bigserial PRIMARY KEY,
      url text NOT NULL,
      secret text NOT NULL,
      webhook_id text NOT NULL,
      payload text NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      attempts int NOT NULL DEFAULT 0
    );
    CREATE INDEX outbox_pending_idx ON naive.outbox (id) WHERE status = 'pending';`);
  return {
    url: url.toString(),
    name,
    sql,
    async drop() {
      await sql.end({ timeout: 5 });
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}

/** A representative event body (~200 bytes of JSON). */
export const PAYLOAD = JSON.stringify({
  order: { id: "ord_0000000000", total: 4200, currency: "EUR", items: [{ sku: "sku_1", quantity: 2 }] },
  customer: { id: "cus_0000000000", email: "someone@example.com" },
});

/**
 * Inserts `count` pending messages the way `send()` writes them, in one statement (ids sort by
 * creation, as core's do). Message `i` has type `types[i % types.length]`. Workers fan them out to
 * every matching endpoint.
 */
export async function seedMessages(
  sql: Sql,
  count: number,
  prefix = "msg_bench",
  types: string[] = ["order.created"],
  traceContext: string | null = null,
): Promise<void> {
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, trace_context)
    SELECT ${prefix} || lpad(i::text, 10, '0'), (${sql.array(types)}::text[])[1 + (i - 1) % ${types.length}::int],
      ${PAYLOAD}, 'pending', ${Date.now()}::bigint, ${traceContext}
    FROM generate_series(1, ${count}::int) AS i`;
  await sql`VACUUM ANALYZE postel.messages`;
}

/** A row of the baselines' table `naive.outbox`, as their claims return it. */
export interface NaiveOutboxRow {
  id: string;
  url: string;
  secret: string;
  webhook_id: string;
  payload: string;
}

/** Inserts `count` pending rows per endpoint URL into the naive baseline's table. */
export async function seedNaive(sql: Sql, count: number, targets: { url: string; secret: string }[]) {
  for (const target of targets) {
    await sql`
      INSERT INTO naive.outbox (url, secret, webhook_id, payload)
      SELECT ${target.url}, ${target.secret}, 'msg_naive' || lpad(i::text, 10, '0'), ${PAYLOAD}
      FROM generate_series(1, ${count}::int) AS i`;
  }
  await sql`VACUUM ANALYZE naive.outbox`;
}

/**
 * CPU time used so far by the server processes serving `database` (Linux /proc; 0 elsewhere). Read it
 * before the clients disconnect: a backend's time is lost when it exits.
 */
export async function backendCpuMs(sql: Sql, database: string): Promise<number> {
  const rows = await sql<{ pid: number }[]>`
    SELECT pid FROM pg_stat_activity WHERE datname = ${database} AND pid <> pg_backend_pid()`;
  const { readFile } = await import("node:fs/promises");
  let ticks = 0;
  for (const { pid } of rows) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    // Fields after the ")" that ends the command name: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

/**
 * Adds `count` finished messages, each with one succeeded delivery and its attempt (in the delivery's
 * row, where Postel keeps a first attempt), as months of history would leave them (generate_series,
 * so a million rows take seconds, not hours).
 */
export async function seedHistory(
  sql: Sql,
  count: number,
  endpointId: string,
  prefix = "msg_hist",
): Promise<void> {
  const then = Date.now() - 30 * 24 * 3_600_000;
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, fanned_out_at, finished_at)
    SELECT ${prefix} || lpad(i::text, 10, '0'), 'order.created', ${PAYLOAD}, 'dispatched',
      ${then}::bigint + i, ${then}::bigint + i, ${then}::bigint + i
    FROM generate_series(1, ${count}::int) AS i`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, attempts_made,
      next_attempt_at, created_at, updated_at, first_attempt_id, first_attempt_started_at,
      first_attempt_latency_ms, first_attempt_outcome, first_attempt_status_code, first_attempt_response_snippet)
    SELECT 'dlv_hist' || lpad(i::text, 10, '0'), ${prefix} || lpad(i::text, 10, '0'), ${endpointId},
      ${prefix} || lpad(i::text, 10, '0'), 'succeeded', 1, ${then}::bigint + i, ${then}::bigint + i,
      ${then}::bigint + i, 'att_hist' || lpad(i::text, 10, '0'), ${then}::bigint + i, 3, 'success', 200, 'ok'
    FROM generate_series(1, ${count}::int) AS i`;
  await sql`VACUUM ANALYZE postel.messages, postel.deliveries, postel.attempts`;
}
