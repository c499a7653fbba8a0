import { type Client, createClient } from "@libsql/client";
import { type ConfigurationIssue, ConfigurationError } from "@postel/core";
import { applyMigrations } from "../migrate.js";
import { SYNC_BUSY_WAIT_MS } from "./busy-retry.js";
import { createDb, type Db } from "./database.js";
import { openWriter, type Synchronous, type Writer } from "./writer.js";

/** A drizzle libsql database (`drizzle(client)`); only its `$client` is used. */
export interface DrizzleSqliteDatabase {
  readonly $client: Client;
}

/**
 * Where the data lives: a URL or path Postel opens (and closes), or your own libsql client or drizzle
 * database, which Postel shares and never closes.
 */
export type SqliteConnection = { url: string } | { client: Client } | { db: DrizzleSqliteDatabase };

/** How a connection is opened. */
export interface OpenOptions {
  /** Apply the shipped migrations on first use. */
  migrate: boolean;
  /** How long a write waits for another connection's write lock, in total. */
  busyTimeoutMs: number;
  /** SQLite's `synchronous` on Postel's own write connection. */
  synchronous: Synchronous;
}

/** An opened connection: the client, the `Db` seam on it, an explicit migration, and closing. */
export interface OpenedConnection {
  client: Client;
  db: Db;
  migrate(): Promise<void>;
  close(): Promise<void>;
}

/** Throws one `ConfigurationError` listing every bad field of `connection` and `options`. */
export function assertConnection(
  connection: SqliteConnection,
  { busyTimeoutMs, synchronous }: Omit<OpenOptions, "migrate">,
  what: string,
): void {
  const issues: ConfigurationIssue[] = [];
  if (synchronous !== "full" && synchronous !== "normal") {
    issues.push({ path: "synchronous", message: 'must be "full" (the default) or "normal"' });
  }
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    issues.push({ path: "busyTimeoutMs", message: "must be a whole number of milliseconds ≥ 0, e.g. 5000" });
  }
  if ("db" in connection && typeof connection.db?.$client?.batch !== "function") {
    issues.push({ path: "db", message: "must be a drizzle libsql database, e.g. drizzle(createClient(…))" });
  }
  if ("url" in connection && (typeof connection.url !== "string" || connection.url === "")) {
    issues.push({ path: "url", message: 'must be a file URL or path, e.g. "file:postel.db"' });
  }
  if (issues.length > 0) throw new ConfigurationError(issues, what);
}

/**
 * Open `connection` lazily: the first read or write opens Postel's writer, switches a file to WAL and
 * (with `migrate`) applies the shipped migrations; a failure there lets the next call try again.
 */
export function openConnection(connection: SqliteConnection, options: OpenOptions): OpenedConnection {
  const { busyTimeoutMs, synchronous } = options;
  const owned = "url" in connection;
  const client = owned
    ? createClient({ url: toUrl(connection.url), timeout: Math.min(busyTimeoutMs, SYNC_BUSY_WAIT_MS) })
    : "client" in connection
      ? connection.client
      : connection.db.$client;

  let connected: Promise<Writer> | undefined;
  const connect = () =>
    (connected ??= (async () => {
      const writer = await openWriter(client, busyTimeoutMs, { synchronous });
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
    const writer = await connect();
    await applyMigrations(writer);
    return writer;
  };
  let prepared: Promise<Writer> | undefined;
  const ready = () =>
    (prepared ??= (options.migrate ? migrateNow() : connect()).catch((error: unknown) => {
      prepared = undefined; // let the next call try again
      throw error;
    }));

  return {
    client,
    db: createDb(client, ready),
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
