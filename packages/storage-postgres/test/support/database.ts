import { randomUUID } from "node:crypto";
import postgres, { type Sql, type TransactionSql } from "postgres";
import { afterAll, beforeAll } from "vitest";
import { migrate, PostgresStorage, type PostgresStorageInstance } from "../../src/index.js";

/** The server the tests use; override with POSTEL_TEST_POSTGRES_URL (any database on it works). */
export const SERVER_URL =
  process.env["POSTEL_TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

/** A throwaway database on the test server, so test files never see each other's rows. */
export interface TestDatabase {
  url: string;
  name: string;
  /** A new postgres.js pool on the database (ended by `drop`). */
  connect(options?: postgres.Options<Record<string, postgres.PostgresType>>): Sql;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `postel_test_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const pools: Sql[] = [];
  return {
    url: url.toString(),
    name,
    connect(options = {}) {
      const sql = postgres(url.toString(), { onnotice: () => {}, ...options });
      pools.push(sql);
      return sql;
    },
    async drop() {
      await Promise.all(pools.map((sql) => sql.end({ timeout: 5 })));
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}

/** Empties every Postel table (the schema and its migrations stay). */
export async function truncatePostel(sql: Sql): Promise<void> {
  await sql`
    TRUNCATE postel.messages, postel.deliveries, postel.attempts, postel.endpoints, postel.endpoint_secrets,
      postel.endpoint_health, postel.received, postel.audit_log, postel.held_keys RESTART IDENTITY`;
}

/**
 * One database per test file, migrated once: registers `beforeAll`/`afterAll` and returns the
 * database and a pool on it (read them inside tests, once `beforeAll` has run).
 */
export function migratedDatabase(): { readonly database: TestDatabase; readonly sql: Sql } {
  let database: TestDatabase | undefined;
  let sql: Sql | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    sql = database.connect();
    await migrate(sql);
  });
  afterAll(() => database?.drop());
  return {
    get database() {
      if (!database) throw new Error("migratedDatabase(): read it inside a test, after beforeAll");
      return database;
    },
    get sql() {
      if (!sql) throw new Error("migratedDatabase(): read it inside a test, after beforeAll");
      return sql;
    },
  };
}

/**
 * How the shared suites (conformance, engine scenarios, input properties) use one migrated database
 * per file: each storage starts from empty tables on the shared pool, and `transaction` runs `fn` in
 * `sql.begin`.
 */
export function postgresHooks(db: { readonly sql: Sql }) {
  return {
    name: "postgres",
    create: async (): Promise<PostgresStorageInstance> => {
      await truncatePostel(db.sql);
      return PostgresStorage({ sql: db.sql }, { migrate: false });
    },
    transaction: async <T>(
      _storage: PostgresStorageInstance,
      fn: (tx: TransactionSql) => Promise<T>,
    ): Promise<T> => {
      // sql.begin's result type unwraps arrays of promises; keep fn's own result type instead.
      let result: T | undefined;
      await db.sql.begin(async (tx) => {
        result = await fn(tx);
      });
      return result as T;
    },
  };
}
