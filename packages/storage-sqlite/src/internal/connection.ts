import { type Client, createClient } from "@libsql/client";
import { type ConfigurationIssue, ConfigurationError } from "@postel/core/storage";
import { applyMigrations, reloadSchema } from "../migrate.js";
import { openFailure } from "./connection-errors.js";
import { isLibsqlClient } from "./libsql-client.js";
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

/** Which factory is being called: error messages name it. */
export type Factory = "SqliteStorage" | "SqliteDedupStore";

/** Throws one `ConfigurationError` listing every bad field of `connection` and `options`. */
export function assertConnection(
  connection: SqliteConnection,
  { migrate, busyTimeoutMs, synchronous }: OpenOptions,
  factory: Factory,
): void {
  const issues: ConfigurationIssue[] = [];
  if (typeof migrate !== "boolean") {
    issues.push({ path: "migrate", message: "must be true (the default: migrate on first use) or false" });
  }
  if (synchronous !== "full" && synchronous !== "normal") {
    issues.push({ path: "synchronous", message: 'must be "full" (the default) or "normal"' });
  }
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    issues.push({ path: "busyTimeoutMs", message: "must be a whole number of milliseconds ≥ 0, e.g. 5000" });
  }
  issues.push(...connectionIssues(connection, factory));
  if (issues.length > 0) throw new ConfigurationError(issues, `${factory} options`);
}

function connectionIssues(connection: unknown, factory: string): ConfigurationIssue[] {
  const example = `${factory}({ url: "file:postel.db" })`;
  if (typeof connection === "string")
    return [{ path: "", message: `a path or URL goes in \`url\`: ${example}` }];
  if (isLibsqlClient(connection)) {
    return [{ path: "", message: `a libsql client goes in \`client\`: ${factory}({ client })` }];
  }
  if (typeof connection !== "object" || connection === null) {
    return [
      { path: "", message: `must be { url }, { client } or { db }, got ${typeName(connection)}: ${example}` },
    ];
  }
  const given = (["url", "client", "db"] as const).filter((key) => key in connection);
  if (given.length !== 1) {
    const message =
      given.length === 0
        ? "needs one of `url` (a file path or URL; Postel opens and closes the database), `client` (your " +
          `@libsql/client client) or \`db\` (your drizzle libsql database), e.g. ${example}`
        : `give only one of ${given.map((key) => `\`${key}\``).join(", ")}`;
    return [{ path: "", message }];
  }
  const { url, client, db } = connection as { url?: unknown; client?: unknown; db?: unknown };
  if (given[0] === "url" && (typeof url !== "string" || url === "")) {
    return [{ path: "url", message: 'must be a file URL or path, e.g. "file:postel.db"' }];
  }
  if (given[0] === "client" && !isLibsqlClient(client)) {
    const message =
      typeof client === "string"
        ? `is a string: a path or URL goes in \`url\`: ${example}`
        : `must be a @libsql/client client, createClient({ url: "file:postel.db" }); got ${typeName(client)}` +
          (typeof (client as { prepare?: unknown } | null)?.prepare === "function"
            ? " (better-sqlite3 and node:sqlite databases are not supported)"
            : "");
    return [{ path: "client", message }];
  }
  if (given[0] === "db" && !isLibsqlClient((db as { $client?: unknown } | null)?.$client)) {
    return [{ path: "db", message: "must be a drizzle libsql database, e.g. drizzle(createClient(…))" }];
  }
  return [];
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}

/**
 * Open `connection` lazily: the first read or write opens Postel's writer, switches a file to WAL and
 * (with `migrate`) applies the shipped migrations; a failure there lets the next call try again.
 */
export function openConnection(
  connection: SqliteConnection,
  options: OpenOptions,
  factory: Factory,
): OpenedConnection {
  const { busyTimeoutMs, synchronous } = options;
  const owned = "url" in connection;
  const client = owned
    ? open(toUrl(connection.url), Math.min(busyTimeoutMs, SYNC_BUSY_WAIT_MS), `${factory} options`)
    : "client" in connection
      ? connection.client
      : connection.db.$client;

  let connected: Promise<Writer> | undefined;
  const connect = () =>
    (connected ??= (async () => {
      let writer: Writer | undefined;
      try {
        writer = await openWriter(client, busyTimeoutMs, { synchronous });
        // WAL lets readers (dashboards, audit reads) run while a worker writes. The mode is stored
        // in the file, so this covers every connection, other processes' included.
        if (client.protocol === "file") await writer.execute("PRAGMA journal_mode = WAL");
        return writer;
      } catch (error) {
        writer?.close();
        connected = undefined;
        throw error;
      }
    })());
  const migrateNow = async (): Promise<Writer> => {
    const writer = await connect();
    await applyMigrations(writer);
    await reloadSchema(client);
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

/** libsql opens a local file at once: one it cannot open fails here, named with the fix. */
function open(url: string, timeout: number, what: string): Client {
  try {
    return createClient({ url, timeout });
  } catch (error) {
    throw openFailure(error, url, what);
  }
}

/** A bare path becomes a `file:` URL; anything with a scheme (`file:`, `libsql:`, …) is kept. */
function toUrl(url: string): string {
  return /^[a-z][a-z0-9+.-]+:/i.test(url) ? url : `file:${url}`;
}
