import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

/** The server the tests use; override with POSTEL_TEST_POSTGRES_URL (any database on it works). */
export const SERVER_URL =
  process.env["POSTEL_TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

/** A database the CLI is pointed at, and how to throw it away. */
export interface TestDatabase {
  name: "postgres" | "sqlite";
  /** What goes in POSTEL_DATABASE_URL. */
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty Postgres database with a random name on the test server. */
export async function createPostgresDatabase(): Promise<TestDatabase> {
  const name = `postel_cli_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return {
    name: "postgres",
    url: url.toString(),
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}

/** A path for a SQLite file (not created) in a fresh temporary directory. */
export async function createSqliteDatabase(): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), "postel-cli-"));
  return {
    name: "sqlite",
    url: join(dir, "postel.db"),
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
