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
  orderingKeys = 0,
): Promise<void> {
  // With `orderingKeys`, message i has the key `key_<i % orderingKeys>`: a key's messages interleave
  // with the others' across the backlog, as sends about many objects do.
  const keyed = orderingKeys > 0;
  await sql`
    INSERT INTO postel.messages (id, type, payload, status, created_at, trace_context${keyed ? sql`, ordering_key` : sql``})
    SELECT ${prefix} || lpad(i::text, 10, '0'), (${sql.array(types)}::text[])[1 + (i - 1) % ${types.length}::int],
      ${PAYLOAD}, 'pending', ${Date.now()}::bigint, ${traceContext}
      ${keyed ? sql`, 'key_' || ((i - 1) % ${orderingKeys}::int)` : sql``}
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

/** What `seedHistory` writes besides `count` finished messages. */
export interface HistoryShape {
  /** Message `i`'s one delivery goes to `endpointIds[i % length]` (required without `owner`). */
  endpointIds?: string[] | undefined;
  /**
   * Message ids `<prefix><i>` (10 digits), deliveries `dlv_hist<i>`, attempts `att_hist<i>…`. Without a
   * prefix, every id is time-sortable like core's (the time of its row, then `i`), so id ranges bound
   * time ranges as they do for messages sent through `send()`.
   */
  prefix?: string | undefined;
  /** Message `i` has type `types[i % length]` (default `order.created`). */
  types?: string[] | undefined;
  /** Message `i` has tenant `tenants[i % length]` (default none). */
  tenants?: string[] | undefined;
  /**
   * Message `i`'s tenant and its delivery's endpoint as SQL expressions over `i` (from 1), in place of
   * `tenants` and `endpointIds`: for what a round-robin over arrays cannot give, such as one tenant
   * with a twentieth of the messages, each sent to one of its tenant's own endpoints.
   */
  owner?: { tenantId: string; endpointId: string } | undefined;
  /** Message `i` is created at `start + i × stepMs` (default 30 days ago, 1 ms apart). */
  start?: number | undefined;
  stepMs?: number | undefined;
  /** Every n-th message is dead-lettered after 3 failed attempts, two of them in `attempts` (0: none). */
  deadLetterEvery?: number | undefined;
  /** Every n-th other message succeeds on its second attempt, kept in `attempts` (0: none). */
  retryEvery?: number | undefined;
  /** Told after each statement (a million rows take a while): a progress line. */
  log?: ((line: string) => void) | undefined;
}

/**
 * Adds `count` finished messages, each with one delivery and its attempts (the first in the
 * delivery's row, where Postel keeps it), as months of history would leave them (generate_series, so
 * a million rows take seconds, not hours). By default every delivery succeeded on its first attempt.
 */
export async function seedHistory(sql: Sql, count: number, shape: HistoryShape): Promise<void> {
  const start = shape.start ?? Date.now() - 30 * 24 * 3_600_000;
  const step = shape.stepMs ?? 1;
  const types = shape.types ?? ["order.created"];
  const { owner, endpointIds = [] } = shape;
  if (owner === undefined && endpointIds.length === 0)
    throw new Error("seedHistory needs endpointIds or owner: every message has a delivery");
  const tenant = owner
    ? sql.unsafe(owner.tenantId)
    : shape.tenants
      ? sql`(${sql.array(shape.tenants)}::text[])[1 + i % ${shape.tenants.length}::int]`
      : sql`NULL`;
  const endpoint = owner
    ? sql.unsafe(owner.endpointId)
    : sql`(${sql.array(endpointIds)}::text[])[1 + i % ${endpointIds.length}::int]`;
  const timed = async (what: string, statement: PromiseLike<unknown>) => {
    const started = Date.now();
    await statement;
    shape.log?.(`  ${what} in ${Math.round((Date.now() - started) / 1000)} s`);
  };
  const ids = historyIds(shape.prefix);
  // Per message i: its time t, whether it was dead-lettered or retried, and its delivery's endpoint.
  const rows = () => sql`generate_series(1, ${count}::int) AS i
    CROSS JOIN LATERAL (
      SELECT ${start}::bigint + i::bigint * ${step}::bigint AS t,
        ${shape.deadLetterEvery ?? 0}::int > 0 AND i % ${shape.deadLetterEvery || 1}::int = 0 AS dead,
        ${shape.retryEvery ?? 0}::int > 0 AND i % ${shape.retryEvery || 1}::int = 0 AS retried
    ) g
    CROSS JOIN LATERAL (
      SELECT ${endpoint} AS endpoint_id,
        CASE WHEN g.dead THEN 3 WHEN g.retried THEN 2 ELSE 1 END AS attempts_made,
        -- the last attempt's start: retries 30 s, then 2 min, after the first
        g.t + CASE WHEN g.dead THEN 150000 WHEN g.retried THEN 30000 ELSE 0 END AS last_at
    ) d`;
  const rowCount = count.toLocaleString("en-US");
  await timed(
    `${rowCount} messages`,
    sql`
    INSERT INTO postel.messages (id, type, payload, tenant_id, status, created_at, fanned_out_at, finished_at)
    SELECT ${sql.unsafe(ids.message)}, (${sql.array(types)}::text[])[1 + i % ${types.length}::int], ${PAYLOAD},
      ${tenant},
      CASE WHEN g.dead THEN 'dead-lettered' ELSE 'dispatched' END, g.t, g.t, d.last_at + 3
    FROM ${rows()}`,
  );
  await timed(
    `${rowCount} deliveries`,
    sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used, attempts_made,
      next_attempt_at, created_at, updated_at, last_error, first_attempt_id, first_attempt_started_at,
      first_attempt_latency_ms, first_attempt_outcome, first_attempt_status_code, first_attempt_response_snippet)
    SELECT ${sql.unsafe(ids.delivery)}, ${sql.unsafe(ids.message)}, d.endpoint_id, ${sql.unsafe(ids.message)},
      CASE WHEN g.dead THEN 'dead-lettered' ELSE 'succeeded' END, d.attempts_made - 1, d.attempts_made,
      d.last_at, g.t, d.last_at + 3, CASE WHEN g.dead THEN 'HTTP 500' END, ${sql.unsafe(ids.attempt(1))}, g.t, 3,
      CASE WHEN d.attempts_made > 1 THEN 'retryable' ELSE 'success' END,
      CASE WHEN d.attempts_made > 1 THEN 500 ELSE 200 END, CASE WHEN d.attempts_made > 1 THEN 'error' ELSE 'ok' END
    FROM ${rows()}`,
  );
  if (shape.deadLetterEvery || shape.retryEvery) {
    await timed(
      "the retries' attempts",
      sql`
      INSERT INTO postel.attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number, started_at,
        latency_ms, outcome, status_code, response_snippet)
      SELECT ${sql.unsafe(ids.attempt("k"))}, ${sql.unsafe(ids.delivery)}, ${sql.unsafe(ids.message)}, d.endpoint_id,
        ${sql.unsafe(ids.message)}, k, g.t + CASE k WHEN 2 THEN 30000 ELSE 150000 END, 3,
        CASE WHEN g.retried THEN 'success' ELSE 'retryable' END, CASE WHEN g.retried THEN 200 ELSE 500 END,
        CASE WHEN g.retried THEN 'ok' ELSE 'error' END
      FROM ${rows()} CROSS JOIN generate_series(2, d.attempts_made) AS k
      WHERE g.dead OR g.retried`,
    );
  }
  await timed("VACUUM ANALYZE", sql`VACUUM ANALYZE postel.messages, postel.deliveries, postel.attempts`);
}

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * SQL (PostgreSQL or SQLite) of a time-sortable id like core's: `<prefix>_`, the epoch ms of the
 * integer expression `time` in core's 10-character encoding, then `serial` (an expression of 16
 * characters of the same alphabet).
 */
export function timeSortableId(prefix: string, time: string, serial: string): string {
  const encoded = Array.from(
    { length: 10 },
    // CAST rather than ::int, so the same SQL runs on SQLite.
    (_, k) => `substr('${ALPHABET}', CAST((${time}) >> ${5 * (9 - k)} & 31 AS integer) + 1, 1)`,
  ).join(" || ");
  return `'${prefix}_' || ${encoded} || ${serial}`;
}

/** SQL expressions (over `i` and `g.t` of `seedHistory`'s rows, and `k`, an attempt's number) of the seeded ids. */
function historyIds(prefix: string | undefined) {
  const serial = (width: number) => `lpad(i::text, ${width}, '0')`;
  if (prefix !== undefined) {
    return {
      message: `'${prefix.replaceAll("'", "''")}' || ${serial(10)}`,
      delivery: `'dlv_hist' || ${serial(10)}`,
      attempt: (n: number | string) => `'att_hist' || ${serial(10)} || '_' || ${n}`,
    };
  }
  return {
    message: timeSortableId("msg", "g.t", serial(16)),
    delivery: timeSortableId("dlv", "g.t", serial(16)),
    // Attempt ids are made when the attempt ends (its start + 3 ms), like core's.
    attempt: (n: number | string) =>
      timeSortableId(
        "att",
        `g.t + 3 + CASE ${n} WHEN 1 THEN 0 WHEN 2 THEN 30000 ELSE 150000 END`,
        `${serial(15)} || ${n}`,
      ),
  };
}
