import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryStorage, type Storage } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import { SqliteStorage } from "@postel/storage-sqlite";
import postgres from "postgres";

/**
 * A real database for one test file: a throwaway Postgres database or a SQLite file in a temp folder;
 * or `InMemoryStorage`, for features the database storages do not have yet (ordered delivery).
 */
export interface TestStorage {
  name: "postgres" | "sqlite" | "memory";
  storage: Storage<unknown>;
  /** Drops the database or deletes the file (after `postel.close()` closed the storage). */
  drop(): Promise<void>;
}

const SERVER_URL = process.env["POSTEL_TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

export async function createStorage(name: TestStorage["name"]): Promise<TestStorage> {
  if (name === "memory")
    return { name, storage: InMemoryStorage() as Storage<unknown>, drop: async () => {} };
  if (name === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "postel-dashboard-"));
    return {
      name,
      storage: SqliteStorage({ url: `file:${join(dir, "dashboard.db")}` }) as Storage<unknown>,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const database = `postel_dashboard_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${database}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${database}`;
  return {
    name,
    storage: PostgresStorage({ url: url.toString() }) as Storage<unknown>,
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}
