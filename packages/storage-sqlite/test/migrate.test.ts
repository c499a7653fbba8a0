import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { type Client, createClient } from "@libsql/client";
import { isPostelError, SchemaMismatchError } from "@postel/core";
import { afterEach, describe, expect, test } from "vitest";
import { migrate, SqliteStorage } from "../src/index.js";
import { runTogether, startChild } from "./child-process.js";
import { tempDatabase } from "./temp-db.js";

const SHIPPED = readdirSync(new URL("../migrations/", import.meta.url))
  .filter((file) => file.endsWith(".sql"))
  .map((file) => file.slice(0, -".sql".length))
  .sort();

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function freshFile() {
  const db = tempDatabase();
  cleanups.push(db.remove);
  return db;
}

function openClient(url: string) {
  const client = createClient({ url });
  cleanups.push(() => client.close());
  return client;
}

async function names(url: string, type: "table" | "view"): Promise<string[]> {
  const rows = await openClient(url).execute({
    sql: "SELECT name FROM sqlite_master WHERE type = ? AND name LIKE 'postel_%' ORDER BY name",
    args: [type],
  });
  return rows.rows.map((row) => String(row["name"]));
}

async function recorded(url: string): Promise<string[]> {
  const rows = await openClient(url).execute("SELECT name FROM postel_migrations ORDER BY name");
  return rows.rows.map((row) => String(row["name"]));
}

describe("migrate", () => {
  test("a fresh file gets every Postel table and the dead-letter view, each migration recorded once", async () => {
    const { url } = freshFile();
    await migrate(openClient(url));
    expect(await names(url, "table")).toEqual(
      expect.arrayContaining([
        "postel_attempts",
        "postel_audit_log",
        "postel_deliveries",
        "postel_endpoint_health",
        "postel_endpoint_rate_buckets",
        "postel_endpoint_secrets",
        "postel_endpoints",
        "postel_messages",
        "postel_meta",
        "postel_migrations",
        "postel_received",
      ]),
    );
    expect(await names(url, "view")).toEqual(["postel_dead_letter"]);
    expect(await recorded(url)).toEqual(SHIPPED);
  });

  test("migrating again is a no-op: nothing re-applied, nothing recorded twice", async () => {
    const { url } = freshFile();
    const client = openClient(url);
    await migrate(client);
    await client.execute("INSERT INTO postel_meta (key, value) VALUES ('kept', 'yes')");
    await migrate(client);
    await SqliteStorage({ client }).migrate();
    expect(await recorded(url)).toEqual(SHIPPED);
    expect((await client.execute("SELECT value FROM postel_meta WHERE key = 'kept'")).rows).toHaveLength(1);
  });

  test("two processes migrating the same fresh file at once both succeed and apply the schema once", async () => {
    const { url } = freshFile();
    const results = await runTogether([
      startChild("migrate-child.ts", [url]),
      startChild("migrate-child.ts", [url]),
    ]);
    expect(results.map((line) => JSON.parse(line))).toEqual([{ migrated: true }, { migrated: true }]);
    expect(await recorded(url)).toEqual(SHIPPED);
    expect(await names(url, "view")).toEqual(["postel_dead_letter"]);
  });

  test("opening while another process holds the fresh file exclusively waits for it instead of failing busy", async () => {
    // What a second process meets while the first switches a fresh file to WAL: every statement,
    // even the writer's first pragma, comes back SQLITE_BUSY until the exclusive lock is released.
    const { url } = freshFile();
    const holder = createClient({ url });
    cleanups.push(() => holder.close());
    await holder.execute("PRAGMA locking_mode = EXCLUSIVE"); // the first write takes the lock and keeps it
    await holder.execute("CREATE TABLE app_table (id INTEGER PRIMARY KEY)");
    const storage = SqliteStorage({ url }, { migrate: false });
    cleanups.push(() => storage.close());
    let outcome = "pending";
    const migrating = storage.migrate().then(
      () => (outcome = "migrated"),
      (error: unknown) => (outcome = String(error)),
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // well past SQLite's own 25 ms wait
    expect(outcome).toBe("pending");
    await holder.execute("PRAGMA locking_mode = NORMAL");
    await holder.execute("SELECT count(*) FROM app_table"); // the next access releases the lock
    await migrating;
    expect(outcome).toBe("migrated");
    expect(await recorded(url)).toEqual(SHIPPED);
  });

  test("a database recording a migration this version does not ship is refused with SchemaMismatchError", async () => {
    const { url } = freshFile();
    const client = openClient(url);
    await migrate(client);
    await client.execute(
      "INSERT INTO postel_migrations (name, hash, applied_at) VALUES ('9999_from_the_future', 'x', 0)",
    );
    const refusal = migrate(client);
    await expect(refusal).rejects.toBeInstanceOf(SchemaMismatchError);
    await expect(refusal).rejects.toThrow(
      /"9999_from_the_future".*does not ship.*Upgrade @postel\/storage-sqlite/s,
    );
    // A storage that migrates on first use refuses every call the same way.
    const storage = SqliteStorage({ client });
    await expect(storage.getMessage("msg_1")).rejects.toMatchObject({ code: "SCHEMA_MISMATCH" });
  });

  test("a recorded migration whose contents differ from the shipped one is refused", async () => {
    const { url } = freshFile();
    const client = openClient(url);
    await migrate(client);
    await client.execute({
      sql: "UPDATE postel_migrations SET hash = 'edited' WHERE name = ?",
      args: [SHIPPED[0]!],
    });
    await expect(migrate(client)).rejects.toThrow(/differs from the one shipped/);
  });

  test("with migrate: false an unmigrated database fails with SCHEMA_MISMATCH telling to call migrate()", async () => {
    const { url } = freshFile();
    const storage = SqliteStorage({ url }, { migrate: false });
    cleanups.push(() => storage.close());
    const failure = storage.claimDue({ owner: "w", now: 0, until: 1, limit: 1 });
    await expect(failure).rejects.toSatisfy(isPostelError);
    await expect(failure).rejects.toThrow(/postel_deliveries.*Call `await storage.migrate\(\)`/s);
    await storage.migrate();
    expect(await storage.claimDue({ owner: "w", now: 0, until: 1, limit: 1 })).toEqual([]);
  });

  test("by default the first call migrates the database", async () => {
    const { url } = freshFile();
    const storage = SqliteStorage({ url });
    cleanups.push(() => storage.close());
    expect(await storage.endpointsRevision()).toBe(0);
    expect(await recorded(url)).toEqual(SHIPPED);
  });
});

/** What an older version's migrate() left behind: every migration before `migration`, recorded. */
async function migratedBefore(client: Client, migration: string): Promise<void> {
  await client.execute(
    "CREATE TABLE postel_migrations (name TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  const before = SHIPPED.indexOf(migration);
  expect(before).toBeGreaterThan(0);
  for (const name of SHIPPED.slice(0, before)) {
    const text = readFileSync(new URL(`../migrations/${name}.sql`, import.meta.url), "utf8");
    await client.executeMultiple(text.replaceAll("--> statement-breakpoint", ""));
    await client.execute({
      sql: "INSERT INTO postel_migrations VALUES (?, ?, 0)",
      args: [name, createHash("sha256").update(text).digest("hex")],
    });
  }
}

describe("upgrades", () => {
  test("endpoints created before 0002_endpoint-limits read back with both limits null", async () => {
    const { url } = freshFile();
    const client = openClient(url);
    await migratedBefore(client, "0002_endpoint-limits");
    await client.execute(`INSERT INTO postel_endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
      VALUES ('ep_old', 'https://old.example.com/hook', '["*"]', '{}', '{}', 'active', 1, 1)`);

    await migrate(client);
    expect(await recorded(url)).toEqual(SHIPPED);
    const storage = SqliteStorage({ client }, { migrate: false });
    expect(await storage.getEndpoint("ep_old")).toMatchObject({
      url: "https://old.example.com/hook",
      maxInFlight: null,
      rateLimit: null,
    });
  });

  test("upgrading to 0010_ordering: endpoints skip a failed key's head, and earlier work stays unordered", async () => {
    const { url } = freshFile();
    const client = openClient(url);
    await migratedBefore(client, "0010_ordering");
    await client.executeMultiple(`
      INSERT INTO postel_endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
        VALUES ('ep_old', 'https://old.example.com/hook', '["*"]', '{}', '{}', 'active', 1, 1);
      INSERT INTO postel_messages (id, type, payload, status, created_at, fanned_out_at)
        VALUES ('msg_old', 'order.created', '{}', 'pending', 1, 1);
      INSERT INTO postel_deliveries (id, message_id, endpoint_id, webhook_id, status, next_attempt_at, created_at, updated_at)
        VALUES ('dlv_old', 'msg_old', 'ep_old', 'wh_old', 'pending', 1, 1, 1);`);

    await migrate(client);
    expect(await recorded(url)).toEqual(SHIPPED);
    const storage = SqliteStorage({ client }, { migrate: false });
    expect(await storage.getEndpoint("ep_old")).toMatchObject({ onKeyFailure: "skip" });
    expect(await storage.getMessage("msg_old")).not.toHaveProperty("orderingKey");
    const [claimed] = await storage.claimDue({ owner: "w", now: 2, until: 60_000, limit: 10 });
    expect(claimed?.delivery).toMatchObject({ id: "dlv_old", status: "pending" });
    expect(claimed?.delivery).not.toHaveProperty("orderingKey");
    expect(await storage.ordering.countWaiting({ cap: 10 })).toBe(0);
  });
});

describe("connection settings", () => {
  test("the file is in WAL mode and the connections SqliteStorage opens have a busy timeout and synchronous=FULL", async () => {
    const { url } = freshFile();
    const storage = SqliteStorage({ url });
    cleanups.push(() => storage.close());
    await storage.migrate();
    const pragma = async (name: string) => (await storage.client.execute(`PRAGMA ${name}`)).rows[0]?.[0];
    expect(await pragma("journal_mode")).toBe("wal");
    expect(await pragma("busy_timeout")).toBe(25);
    expect(await pragma("synchronous")).toBe(2); // FULL
    // WAL is a property of the file: a connection opened by anyone else sees it too.
    expect((await openClient(url).execute("PRAGMA journal_mode")).rows[0]?.[0]).toBe("wal");
  });

  test("upgrading from the first schema keeps received ids, now done and keyed by (source, id)", async () => {
    const { url } = freshFile();
    const client = openClient(url);
    const initial = readFileSync(new URL("../migrations/0000_initial.sql", import.meta.url), "utf8");
    await client.executeMultiple(initial.replaceAll("--> statement-breakpoint", ""));
    await client.execute(
      "CREATE TABLE postel_migrations (name TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    );
    await client.execute({
      sql: "INSERT INTO postel_migrations VALUES ('0000_initial', ?, 0)",
      args: [createHash("sha256").update(initial).digest("hex")],
    });
    await client.execute(
      "INSERT INTO postel_received (id, source, received_at, expires_at) VALUES ('msg_1', 'billing', 1, 99)",
    );

    await migrate(client);
    expect(await recorded(url)).toEqual(SHIPPED);
    const { rows } = await client.execute(
      "SELECT source, id, status, received_at, expires_at FROM postel_received",
    );
    expect(rows.map((row) => ({ ...row }))).toEqual([
      { source: "billing", id: "msg_1", status: "done", received_at: 1, expires_at: 99 },
    ]);
    // The same id from another source is a separate record now.
    await client.execute("INSERT INTO postel_received VALUES ('crm', 'msg_1', 'processing', 1, 99)");
  });
});
