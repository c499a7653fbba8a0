import type { Client, Transaction } from "@libsql/client";
import { runCatalogWriteConformance } from "@postel/core/testing";
import { expect } from "vitest";
import type { SqliteStorage } from "../src/index.js";
import { sqliteHooks } from "./storage-hooks.js";

// The event catalog is checked in send()/sendBatch() before any storage call: the shared suite reads
// the rows straight from the SQLite file to show a refused event leaves nothing behind, in or out of
// the caller's transaction. Each test gets a migrated file of its own.

runCatalogWriteConformance({
  name: sqliteHooks.name,
  create: async () => {
    const storage = await sqliteHooks.create();
    await storage.client.execute("CREATE TABLE app_orders (id TEXT PRIMARY KEY)");
    return storage;
  },
  destroy: sqliteHooks.destroy,
  // sqliteHooks opens a libsql transaction (storage.client.transaction), not a drizzle one.
  transaction: <T>(storage: SqliteStorage, fn: (tx: Transaction) => Promise<T>) =>
    sqliteHooks.transaction(storage, (tx) => fn(tx as Transaction)),
  counts: async (storage, tx) => {
    const on: Client | Transaction = tx ?? storage.client;
    const { rows } = await on.execute(
      "SELECT (SELECT count(*) FROM postel_messages) AS messages, (SELECT count(*) FROM postel_deliveries) AS deliveries",
    );
    return { messages: Number(rows[0]?.["messages"]), deliveries: Number(rows[0]?.["deliveries"]) };
  },
  storedPayload: async (storage, id) => {
    const { rows } = await storage.client.execute({
      sql: "SELECT payload, typeof(payload) AS kind FROM postel_messages WHERE id = ?",
      args: [id],
    });
    const row = rows[0];
    if (!row) throw new Error(`no message ${id}`);
    // SQLite-specific: the payload is stored as TEXT, not a BLOB or a number.
    expect(row["kind"]).toBe("text");
    return String(row["payload"]);
  },
  insertAppRow: async (tx, id) => {
    await tx.execute({ sql: "INSERT INTO app_orders (id) VALUES (?)", args: [id] });
  },
  appRows: async (storage) => {
    const { rows } = await storage.client.execute("SELECT id FROM app_orders ORDER BY id");
    return rows.map((row) => String(row["id"]));
  },
});
