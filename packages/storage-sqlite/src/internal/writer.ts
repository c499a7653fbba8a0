import { type Client, createClient, type ResultSet, type Transaction } from "@libsql/client";
import type { Statement } from "./statement.js";
import { isBusy, retryWhileBusy, SYNC_BUSY_WAIT_MS } from "./busy-retry.js";

/** Where Postel's write transactions run. Every method waits out other connections' write locks. */
export interface Writer {
  /** One write transaction (`BEGIN IMMEDIATE` … `COMMIT`) running `statements` in order. */
  batch(statements: Statement[]): Promise<ResultSet[]>;
  /** An interactive write transaction (`BEGIN IMMEDIATE`), for migrations. */
  transaction(): Promise<Transaction>;
  /** One statement outside a transaction (connection pragmas). */
  execute(sql: string): Promise<ResultSet>;
  /** Close the writer's own connection (never the client it was made from). */
  close(): void;
}

/**
 * Open the connection Postel writes through.
 *
 * libsql's local driver does not reset a statement that failed with SQLITE_BUSY; until garbage
 * collection finalizes it, its connection keeps a stale read snapshot and every later `BEGIN` there
 * fails too. So for a local file Postel writes through a connection of its own (opened on the same
 * file, found with `PRAGMA database_list`) and replaces it whenever a write comes back busy, instead
 * of leaving a poisoned connection in the shared pool. Remote clients (no local locks) and in-memory
 * databases (one connection only) are written through directly.
 */
export async function openWriter(
  client: Client,
  busyTimeoutMs: number,
  options: { synchronous?: Synchronous } = {},
): Promise<Writer> {
  const path =
    client.protocol === "file" ? await retryWhileBusy(() => mainDatabaseFile(client), busyTimeoutMs) : "";
  if (path === "") {
    const shared = Promise.resolve(client);
    return retrying({ current: () => shared, replace: () => {}, close: () => {} }, busyTimeoutMs);
  }
  // `synchronous` belongs to a connection, not to the file: each connection opened here is set up
  // before its first write.
  const pragma = `PRAGMA synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`;
  const open = async () => {
    const own = createClient({ url: `file:${path}`, timeout: SYNC_BUSY_WAIT_MS, concurrency: 1 });
    try {
      await own.execute(pragma);
      return own;
    } catch (error) {
      own.close(); // a busy statement poisons its connection: the next try opens a fresh one
      throw error;
    }
  };
  const closeSoon = (connection: Promise<Client>) =>
    void connection.then(
      (c) => c.close(),
      () => undefined,
    );
  // Even a pragma reads the schema first, so while another process holds the file exclusively (its
  // first migration switching a fresh file to WAL) opening comes back busy: it waits like a write.
  // Later replacements need no wait of their own: the write that asked for one retries it.
  let own = retryWhileBusy(open, busyTimeoutMs);
  await own; // fail here, not on the first write, when the file cannot be opened
  const connection: Connection = {
    current: () => own,
    replace: () => {
      closeSoon(own);
      own = open();
    },
    close: () => closeSoon(own),
  };
  return retrying(connection, busyTimeoutMs);
}

/** `synchronous` of Postel's own writes: `full` fsyncs every commit, `normal` (WAL) only checkpoints. */
export type Synchronous = "full" | "normal";

interface Connection {
  current(): Promise<Client>;
  /** Swap a connection that came back busy for a fresh one. */
  replace(): void;
  close(): void;
}

function retrying(connection: Connection, busyTimeoutMs: number): Writer {
  const attempt = <T>(run: (client: Client) => Promise<T>) =>
    retryWhileBusy(async () => {
      try {
        return await run(await connection.current());
      } catch (error) {
        if (isBusy(error)) connection.replace();
        throw error;
      }
    }, busyTimeoutMs);
  return {
    batch: (statements) => attempt((c) => c.batch(statements, "write")),
    transaction: () => attempt((c) => c.transaction("write")),
    execute: (sql) => attempt((c) => c.execute(sql)),
    close: () => connection.close(),
  };
}

async function mainDatabaseFile(client: Client): Promise<string> {
  const rows = (await client.execute("PRAGMA database_list")).rows;
  const main = rows.find((row) => row["name"] === "main");
  return main ? String(main["file"] ?? "") : "";
}
