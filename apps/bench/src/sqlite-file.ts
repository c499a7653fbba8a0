import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { SqliteStorage } from "@postel/storage-sqlite";
import { PAYLOAD } from "./database.js";
import type { Synchronous } from "./protocol.js";

/** A fresh SQLite database file for one run, in its own temporary directory. */
export interface BenchFile {
  /** `file:` URL of the database. */
  url: string;
  /** A connection of the orchestrator's own (WAL is set on the file; close it before the worker runs). */
  client: Client;
  /** Closes the connection and deletes the directory with the file, its WAL and shared memory. */
  remove(): Promise<void>;
}

/**
 * Creates an empty database file in a new temporary directory (on the same disk as the OS temp dir,
 * so fsync costs what it costs there). With `migrate`, Postel's schema is applied as at startup.
 */
export async function createBenchFile(options: { migrate: boolean }): Promise<BenchFile> {
  const dir = await mkdtemp(join(tmpdir(), "postel-bench-"));
  const url = `file:${join(dir, "bench.db")}`;
  if (options.migrate) {
    const storage = SqliteStorage({ url });
    await storage.migrate();
    await storage.close();
  }
  const client = createClient({ url, timeout: 5_000, concurrency: 1 });
  await client.execute("PRAGMA journal_mode = WAL");
  return {
    url,
    client,
    async remove() {
      client.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Ids `<prefix>0000000001`… in SQL: zero-padded so they sort by creation, as core's ids do. */
const paddedId = (prefix: string, column: string) => `'${prefix}' || substr('0000000000' || ${column}, -10)`;

/** A recursive CTE of the integers 1…:count (SQLite has no generate_series built in). */
export const SERIES =
  "WITH RECURSIVE series(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM series WHERE i < :count)";

/**
 * Inserts `count` pending messages the way `send()` writes them, in one statement (a recursive CTE
 * in place of generate_series), then checkpoints the WAL so the drain starts from a clean file. Workers fan them out to every matching endpoint.
 */
export async function seedSqliteMessages(client: Client, count: number, prefix = "msg_bench"): Promise<void> {
  await client.execute({
    sql: `${SERIES}
      INSERT INTO postel_messages (id, type, payload, status, created_at)
      SELECT ${paddedId(prefix, "i")}, 'order.created', :payload, 'pending', :now FROM series`,
    args: { count, payload: PAYLOAD, now: Date.now() },
  });
  await settle(client);
}

/**
 * Inserts `count` messages that finished 30 days ago, each with one succeeded delivery to
 * `endpointId` and its attempt, as months of history would leave them. Their ids (`msg_00hist…`)
 * sort below the ids of messages made this century, so retention's walk of the key reaches them.
 */
export async function seedSqliteHistory(client: Client, count: number, endpointId: string): Promise<void> {
  const then = Date.now() - 30 * 24 * 3_600_000;
  await client.batch(
    [
      {
        sql: `${SERIES}
          INSERT INTO postel_messages (id, type, payload, status, created_at, fanned_out_at, finished_at)
          SELECT ${paddedId("msg_00hist", "i")}, 'order.created', :payload, 'dispatched', :then + i, :then + i, :then + i
          FROM series`,
        args: { count, payload: PAYLOAD, then },
      },
      {
        sql: `INSERT INTO postel_deliveries (id, message_id, endpoint_id, webhook_id, status, attempts_made,
            next_attempt_at, created_at, updated_at)
          SELECT 'dlv' || substr(id, 4), id, :endpointId, id, 'succeeded', 1, created_at, created_at, created_at
          FROM postel_messages WHERE id LIKE 'msg_00hist%'`,
        args: { endpointId },
      },
      {
        sql: `INSERT INTO postel_attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
            started_at, latency_ms, outcome, status_code, response_snippet)
          SELECT 'att' || substr(id, 4), id, message_id, endpoint_id, webhook_id, 1, created_at, 3, 'success', 200, 'ok'
          FROM postel_deliveries WHERE id LIKE 'dlv_00hist%'`,
      },
    ],
    "write",
  );
  await settle(client);
}

/**
 * The naive baseline's table, as someone writing an outbox by hand on SQLite would: an integer key,
 * a status, and a partial index over the rows still to send.
 */
export async function createNaiveTable(client: Client): Promise<void> {
  await client.executeMultiple(`
    CREATE TABLE naive_outbox (
      id INTEGER PRIMARY KEY,
      url TEXT NOT NULL,
      secret TEXT NOT NULL,
      webhook_id TEXT NOT NULL,
      payload TEXT NOT NULL,
      status TEXT NOT NULL DEFAULT 'pending',
      attempts INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX naive_outbox_pending ON naive_outbox (id) WHERE status = 'pending';`);
}

/** Inserts `count` pending rows per endpoint URL into the naive table, then checkpoints. */
export async function seedSqliteNaive(
  client: Client,
  count: number,
  targets: { url: string; secret: string }[],
): Promise<void> {
  for (const target of targets) {
    await client.execute({
      sql: `${SERIES}
        INSERT INTO naive_outbox (url, secret, webhook_id, payload)
        SELECT :url, :secret, ${paddedId("msg_naive", "i")}, :payload FROM series`,
      args: { count, url: target.url, secret: target.secret, payload: PAYLOAD },
    });
  }
  await settle(client);
}

/**
 * Folds the WAL back into the database file. No ANALYZE: SQLite never gathers planner statistics by
 * itself and neither Postel nor a hand-written outbox runs it, so the bench plans queries as an
 * application's file would (unlike PostgreSQL, whose autovacuum analyzes on its own).
 */
export async function settle(client: Client): Promise<void> {
  await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
}

/** `synchronous` as the SQL keyword. */
export const synchronousPragma = (synchronous: Synchronous) =>
  `PRAGMA synchronous = ${synchronous === "normal" ? "NORMAL" : "FULL"}`;

/** The SQLite library version the bench runs on (libsql's build of it). */
export async function sqliteVersion(): Promise<string> {
  const client = createClient({ url: ":memory:" });
  try {
    const { rows } = await client.execute("SELECT sqlite_version() AS version");
    return String(rows[0]?.["version"] ?? "unknown");
  } finally {
    client.close();
  }
}
