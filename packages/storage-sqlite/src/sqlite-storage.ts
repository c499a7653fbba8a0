import { type Client, createClient } from "@libsql/client";
import { ConfigurationError, type ConfigurationIssue, type Storage } from "@postel/core";
import { auditStore } from "./audit.js";
import { deliveryQueue } from "./delivery-queue.js";
import { endpointStore } from "./endpoints.js";
import { SYNC_BUSY_WAIT_MS } from "./internal/busy-retry.js";
import { createDb } from "./internal/database.js";
import { openWriter, type Writer } from "./internal/writer.js";
import { applyMigrations } from "./migrate.js";
import { outbox } from "./outbox.js";
import { replayStore } from "./replay.js";
import type { SqliteTransaction } from "./transaction.js";

/** A drizzle libsql database (`drizzle(client)`); only its `$client` is used. */
export interface DrizzleSqliteDatabase {
  readonly $client: Client;
}

/**
 * Where the data lives: a URL or path Postel opens (and closes), or your own libsql client or drizzle
 * database, which Postel shares and never closes.
 */
export type SqliteConnection = { url: string } | { client: Client } | { db: DrizzleSqliteDatabase };

/** Options of `SqliteStorage()`. */
export interface SqliteStorageOptions {
  /** Apply the shipped migrations on first use (default true). With false, call `migrate()` yourself. */
  migrate?: boolean;
  /**
   * How long a write waits for another connection's write lock before failing with SQLITE_BUSY
   * (default 5000). SQLite's own `busy_timeout` on connections opened from `{ url }` is kept at 25 ms
   * because libsql waits synchronously; the rest is waited asynchronously, without blocking.
   */
  busyTimeoutMs?: number;
}

/** Postel's `Storage` on SQLite, plus the client it runs on and an explicit `migrate()`. */
export interface SqliteStorage extends Storage<SqliteTransaction> {
  readonly name: "sqlite";
  /** The libsql client in use: yours with `{ client }` / `{ db }`, else the one opened from `url`. */
  readonly client: Client;
  /** Create or upgrade the schema (see the standalone `migrate`). Safe to call from several processes. */
  migrate(): Promise<void>;
}

/**
 * Postel's embedded default storage: outbox, delivery queue and audit trail in one SQLite file, in
 * WAL mode, with every claim taken under SQLite's single write lock (`BEGIN IMMEDIATE`).
 * @example
 * const storage = SqliteStorage({ url: "file:postel.db" });
 * const postel = Postel({ outbound: { storage } });
 */
export function SqliteStorage(
  connection: SqliteConnection,
  options: SqliteStorageOptions = {},
): SqliteStorage {
  const { migrate: migrateOnUse = true, busyTimeoutMs = 5000 } = options;
  const issues: ConfigurationIssue[] = [];
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    issues.push({ path: "busyTimeoutMs", message: "must be a whole number of milliseconds ≥ 0, e.g. 5000" });
  }
  if ("db" in connection && typeof connection.db?.$client?.batch !== "function") {
    issues.push({ path: "db", message: "must be a drizzle libsql database, e.g. drizzle(createClient(…))" });
  }
  if ("url" in connection && (typeof connection.url !== "string" || connection.url === "")) {
    issues.push({ path: "url", message: 'must be a file URL or path, e.g. "file:postel.db"' });
  }
  if (issues.length > 0) throw new ConfigurationError(issues, "SqliteStorage options");

  const owned = "url" in connection;
  const client = owned
    ? createClient({ url: toUrl(connection.url), timeout: Math.min(busyTimeoutMs, SYNC_BUSY_WAIT_MS) })
    : "client" in connection
      ? connection.client
      : connection.db.$client;

  let connected: Promise<Writer> | undefined;
  const connect = () =>
    (connected ??= (async () => {
      const writer = await openWriter(client, busyTimeoutMs);
      try {
        // WAL lets readers (dashboards, audit reads) run while a worker writes. The mode is stored
        // in the file, so this covers every connection, other processes' included.
        if (client.protocol === "file") await writer.execute("PRAGMA journal_mode = WAL");
        return writer;
      } catch (error) {
        writer.close();
        connected = undefined;
        throw error;
      }
    })());
  const migrateNow = async (): Promise<Writer> => {
    const connected = await connect();
    await applyMigrations(connected);
    return connected;
  };
  let prepared: Promise<Writer> | undefined;
  const ready = () =>
    (prepared ??= (migrateOnUse ? migrateNow() : connect()).catch((error: unknown) => {
      prepared = undefined; // let the next call try again
      throw error;
    }));
  const db = createDb(client, ready);

  return {
    name: "sqlite",
    client,
    ...outbox(db),
    ...deliveryQueue(db),
    ...endpointStore(db),
    ...auditStore(db),
    ...replayStore(db),
    async migrate() {
      const writer = await migrateNow();
      prepared ??= Promise.resolve(writer); // already migrated: first use need not check again
    },
    async close() {
      const writer = await connected?.catch(() => undefined);
      writer?.close();
      if (owned) client.close();
    },
  };
}

/** A bare path becomes a `file:` URL; anything with a scheme (`file:`, `libsql:`, …) is kept. */
function toUrl(url: string): string {
  return /^[a-z][a-z0-9+.-]+:/i.test(url) ? url : `file:${url}`;
}
