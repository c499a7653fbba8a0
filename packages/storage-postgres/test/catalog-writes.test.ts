import { runCatalogWriteConformance } from "@postel/core/testing";
import type { Sql, TransactionSql } from "postgres";
import { beforeAll } from "vitest";
import { migratedDatabase, postgresHooks } from "./support/database.js";

// The event catalog is checked in send()/sendBatch() before any storage call: the shared suite reads
// the rows straight from PostgreSQL to show a refused event leaves nothing behind, in or out of the
// caller's transaction. One database per file, migrated once; each test starts from empty tables.

const db = migratedDatabase();
const hooks = postgresHooks(db);

beforeAll(async () => {
  await db.sql`CREATE TABLE app_orders (id text PRIMARY KEY)`;
});

runCatalogWriteConformance({
  name: hooks.name,
  create: async () => {
    await db.sql`TRUNCATE app_orders`;
    return hooks.create();
  },
  transaction: hooks.transaction,
  counts: async (_storage, tx?: TransactionSql) => {
    const on: Sql | TransactionSql = tx ?? db.sql;
    const [row] = await on<{ messages: number; deliveries: number }[]>`
      SELECT (SELECT count(*) FROM postel.messages)::int AS messages,
        (SELECT count(*) FROM postel.deliveries)::int AS deliveries`;
    if (!row) throw new Error("no count row");
    return row;
  },
  storedPayload: async (_storage, id) => {
    const [row] = await db.sql<{ payload: string }[]>`SELECT payload FROM postel.messages WHERE id = ${id}`;
    if (!row) throw new Error(`no message ${id}`);
    return row.payload;
  },
  insertAppRow: async (tx, id) => {
    await tx`INSERT INTO app_orders (id) VALUES (${id})`;
  },
  appRows: async () => {
    const rows = await db.sql<{ id: string }[]>`SELECT id FROM app_orders ORDER BY id`;
    return rows.map((row) => row.id);
  },
});
