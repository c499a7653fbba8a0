import { type Client, createClient, type ResultSet, type Transaction } from "@libsql/client";
import type { Statement } from "./database.js";
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
export async function openWriter(client: Client, busyTimeoutMs: number): Promise<Writer> {
  const path = client.protocol === "file" ? await mainDatabaseFile(client) : "";
  if (path === "") {
    return retrying({ current: () => client, replace: () => {}, close: () => {} }, busyTimeoutMs);
  }
  const open = () => createClient({ url: `file:${path}`, timeout: SYNC_BUSY_WAIT_MS, concurrency: 1 });
  let own = open();
  const connection = {
    current: () => own,
    replace: () => {
      own.close();
      own = open();
    },
    close: () => own.close(),
  };
  return retrying(connection, busyTimeoutMs);
}

interface Connection {
  current(): Client;
  /** Swap a connection that came back busy for a fresh one. */
  replace(): void;
  close(): void;
}

function retrying(connection: Connection, busyTimeoutMs: number): Writer {
  const attempt = <T>(run: (client: Client) => Promise<T>) =>
    retryWhileBusy(async () => {
      try {
        return await run(connection.current());
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
