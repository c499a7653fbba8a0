import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isPostelError, SchemaMismatchError } from "@postel/core";
import postgres, { type Sql } from "postgres";
import { afterEach, describe, expect, test } from "vitest";
import { migrate, PostgresStorage } from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";
import { newMessage } from "./support/messages.js";

/** The migrations this package ships, in order, from drizzle-kit's journal. */
const SHIPPED: string[] = JSON.parse(
  readFileSync(new URL("../migrations/meta/_journal.json", import.meta.url), "utf8"),
).entries.map((entry: { tag: string }) => entry.tag);

const TABLES = [
  "attempts",
  "audit_log",
  "deliveries",
  "endpoint_health",
  "endpoint_rate_buckets",
  "endpoint_secrets",
  "endpoints",
  "held_keys",
  "messages",
  "meta",
  "migrations",
  "received",
];

let database: TestDatabase | undefined;
const freshDatabase = async () => {
  database = await createTestDatabase();
  return database;
};
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

describe("migrate()", () => {
  test("a fresh database gets every table and the all_attempts and dead_letter views in schema postel", async () => {
    const sql = (await freshDatabase()).connect();
    await migrate(sql);
    const tables = await sql<{ table_name: string; table_type: string }[]>`
      SELECT table_name, table_type FROM information_schema.tables
      WHERE table_schema = 'postel' ORDER BY table_name`;
    expect(tables.filter((t) => t.table_type === "BASE TABLE").map((t) => t.table_name)).toEqual(TABLES);
    expect(tables.filter((t) => t.table_type === "VIEW").map((t) => t.table_name)).toEqual([
      "all_attempts",
      "dead_letter",
    ]);
    const applied = await sql`SELECT name, hash FROM postel.migrations ORDER BY name`;
    expect(applied.map((row) => row["name"])).toEqual(SHIPPED);
  });

  test("a second migrate() is a no-op", async () => {
    const sql = (await freshDatabase()).connect();
    await migrate(sql, () => 1_000);
    await migrate(sql, () => 2_000);
    const applied = await sql`SELECT name, applied_at FROM postel.migrations ORDER BY name`;
    expect(applied.map((row) => Number(row["applied_at"]))).toEqual(SHIPPED.map(() => 1_000));
  });

  test("5 concurrent migrate() calls on separate connections to a fresh database all succeed", async () => {
    const db = await freshDatabase();
    const pools = Array.from({ length: 5 }, () => db.connect({ max: 1 }));
    await Promise.all(pools.map((sql) => migrate(sql)));
    const [row] = await pools[0]!`SELECT count(*)::int AS n FROM postel.migrations`;
    expect(row?.["n"]).toBe(SHIPPED.length);
  });

  test("leaves the host's public schema and drizzle journal untouched", async () => {
    const sql = (await freshDatabase()).connect();
    await sql`CREATE TABLE public.orders (id int PRIMARY KEY)`;
    await sql`CREATE SCHEMA drizzle`;
    await sql`CREATE TABLE drizzle.__drizzle_migrations (id serial PRIMARY KEY, hash text NOT NULL)`;
    await sql`INSERT INTO drizzle.__drizzle_migrations (hash) VALUES ('host-migration')`;
    await migrate(sql);
    const publicTables =
      await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`;
    expect(publicTables.map((row) => row["table_name"])).toEqual(["orders"]);
    const journal = await sql`SELECT hash FROM drizzle.__drizzle_migrations`;
    expect(journal.map((row) => row["hash"])).toEqual(["host-migration"]);
  });

  test("a database migrated by a newer version refuses to start with SchemaMismatchError", async () => {
    const db = await freshDatabase();
    const sql = db.connect();
    await migrate(sql);
    await sql`INSERT INTO postel.migrations (name, hash, applied_at) VALUES ('9999_from_the_future', 'x', 0)`;

    const error = await migrate(sql).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaMismatchError);
    expect(isPostelError(error) && error.code).toBe("SCHEMA_MISMATCH");
    expect((error as Error).message).toMatch(/9999_from_the_future.*Upgrade @postel\/storage-postgres/s);

    for (const migrateOnFirstUse of [true, false]) {
      const storage = PostgresStorage({ sql }, { migrate: migrateOnFirstUse });
      await expect(storage.enqueue(newMessage())).rejects.toBeInstanceOf(SchemaMismatchError);
    }
  });
});

/** What an older version's migrate() left behind: every migration before `migration`, recorded. */
async function migratedBefore(sql: Sql, migration: string): Promise<void> {
  await sql`CREATE SCHEMA postel`;
  await sql`CREATE TABLE postel.migrations (name text PRIMARY KEY, hash text NOT NULL, applied_at bigint NOT NULL)`;
  const before = SHIPPED.indexOf(migration);
  expect(before).toBeGreaterThan(0);
  for (const name of SHIPPED.slice(0, before)) {
    const text = readFileSync(new URL(`../migrations/${name}.sql`, import.meta.url), "utf8");
    await sql.unsafe(text);
    const hash = createHash("sha256").update(text).digest("hex");
    await sql`INSERT INTO postel.migrations (name, hash, applied_at) VALUES (${name}, ${hash}, 0)`;
  }
}

describe("upgrades", () => {
  test("endpoints created before 0004_endpoint-limits read back with both limits null", async () => {
    const sql = (await freshDatabase()).connect();
    await migratedBefore(sql, "0004_endpoint-limits");
    await sql`
      INSERT INTO postel.endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
      VALUES ('ep_old', 'https://old.example.com/hook', '["*"]', '{}', '{}', 'active', 1, 1)`;

    await migrate(sql);
    const applied = await sql`SELECT name FROM postel.migrations ORDER BY name`;
    expect(applied.map((row) => row["name"])).toEqual(SHIPPED);
    const storage = PostgresStorage({ sql }, { migrate: false });
    expect(await storage.getEndpoint("ep_old")).toMatchObject({
      url: "https://old.example.com/hook",
      maxInFlight: null,
      rateLimit: null,
    });
  });

  test("endpoints and messages from before 0014_ordering read back unordered, their endpoints skipping a failed key's head", async () => {
    const sql = (await freshDatabase()).connect();
    await migratedBefore(sql, "0014_ordering");
    await sql`
      INSERT INTO postel.endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
      VALUES ('ep_old', 'https://old.example.com/hook', '["*"]', '{}', '{}', 'active', 1, 1)`;
    await sql`
      INSERT INTO postel.messages (id, type, payload, status, created_at)
      VALUES ('msg_old', 'order.created', '{}', 'pending', 1)`;

    await migrate(sql);
    const storage = PostgresStorage({ sql }, { migrate: false });
    expect(await storage.getEndpoint("ep_old")).toMatchObject({ onKeyFailure: "skip" });
    expect(await storage.getMessage("msg_old")).not.toHaveProperty("orderingKey");
    expect(await storage.ordering.listHeldKeys({ limit: 10 })).toEqual([]);
  });
});

describe("first use", () => {
  test("migrates by default, so the first call just works", async () => {
    const db = await freshDatabase();
    const storage = PostgresStorage({ url: db.url });
    try {
      const message = newMessage();
      await storage.enqueue(message);
      expect(await storage.getMessage(message.id)).toMatchObject({ id: message.id });
    } finally {
      await storage.close();
    }
  });

  test("with migrate: false on an empty database, calls fail with SchemaMismatchError naming migrate()", async () => {
    const db = await freshDatabase();
    const sql = db.connect();
    const storage = PostgresStorage({ sql }, { migrate: false });
    const error = await storage.getMessage("msg_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaMismatchError);
    expect((error as Error).message).toContain("migrate()");
  });

  test("a storage given a url owns its pool: close() ends it", async () => {
    const db = await freshDatabase();
    const storage = PostgresStorage({ url: db.url });
    await storage.migrate();
    await storage.close();
    await expect(storage.getMessage("msg_1")).rejects.toThrow();
    const probe = postgres(db.url, { max: 1 });
    const rows =
      await probe`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${db.name} AND pid <> pg_backend_pid()`;
    await probe.end();
    expect(rows[0]?.["n"]).toBe(0);
  });
});
