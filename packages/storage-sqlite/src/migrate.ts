import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { Client } from "@libsql/client";
import { ConfigurationError, SchemaMismatchError } from "@postel/core/storage";
import { isLibsqlClient } from "./internal/libsql-client.js";
import { translateError } from "./internal/database.js";
import { serialiseWrite } from "./internal/write-lock.js";
import { openWriter, type Writer } from "./internal/writer.js";

/** One shipped migration: `migrations/<name>.sql`, split at drizzle-kit's statement breakpoints. */
interface Migration {
  name: string;
  hash: string;
  statements: string[];
}

// `migrations/` sits beside `src/` and `dist/`, so this resolves from the sources and the bundle alike.
const MIGRATIONS_DIR = new URL("../migrations/", import.meta.url);

let shipped: Promise<Migration[]> | undefined;

function loadMigrations(): Promise<Migration[]> {
  shipped ??= (async () => {
    const files = (await readdir(MIGRATIONS_DIR)).filter((file) => file.endsWith(".sql")).sort();
    return Promise.all(
      files.map(async (file) => {
        const text = await readFile(new URL(file, MIGRATIONS_DIR), "utf8");
        return {
          name: file.slice(0, -".sql".length),
          hash: createHash("sha256").update(text).digest("hex"),
          statements: text
            .split("--> statement-breakpoint")
            .map((statement) => statement.trim())
            .filter((statement) => statement.length > 0),
        };
      }),
    );
  })();
  return shipped;
}

/**
 * Create or upgrade Postel's tables in the database behind `client`.
 *
 * Runs inside one `BEGIN IMMEDIATE` transaction, so concurrent callers (other processes included)
 * take turns and the second finds the work done. Applied migrations are recorded in Postel's own
 * `postel_migrations` table (name, sha-256, applied_at), never in drizzle-kit's journal. Refuses with
 * `SchemaMismatchError` when the database records a migration this version does not ship, or one
 * whose contents differ: the database then belongs to a different version of this package.
 * `busyTimeoutMs` (default 5000) bounds the wait for another process's write lock.
 * @example
 * await migrate(createClient({ url: "file:postel.db" }));
 */
export async function migrate(client: Client, options: { busyTimeoutMs?: number } = {}): Promise<void> {
  if (!isLibsqlClient(client)) {
    throw new ConfigurationError(
      [
        {
          path: "client",
          message: 'must be a @libsql/client client, e.g. createClient({ url: "file:postel.db" })',
        },
      ],
      "migrate() argument",
    );
  }
  const writer = await openWriter(client, options.busyTimeoutMs ?? 5000).catch((error: unknown) => {
    throw translateError(error);
  });
  try {
    await applyMigrations(writer);
    await reloadSchema(client);
  } finally {
    writer.close();
  }
}

/**
 * Make `client` see the schema the writer's own connection may just have changed. libsql names a
 * statement's columns when it prepares it, from the connection's cached schema, while SQLite notices
 * another connection's change only when a statement runs: the first `SELECT *` after an ALTER TABLE
 * would come back with the added column unnamed. Running any statement reloads the cached schema.
 */
export async function reloadSchema(client: Client): Promise<void> {
  await client.execute("SELECT 1 FROM postel_migrations LIMIT 1").catch((error: unknown) => {
    throw translateError(error);
  });
}

/** `migrate` on an open writer (SqliteStorage's own). */
export async function applyMigrations(writer: Writer): Promise<void> {
  const migrations = await loadMigrations();
  await serialiseWrite(async () => {
    const tx = await writer.transaction().catch((error: unknown) => {
      throw translateError(error);
    });
    try {
      await tx.execute(`CREATE TABLE IF NOT EXISTS postel_migrations (
        name TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
      const applied = (await tx.execute("SELECT name, hash FROM postel_migrations ORDER BY name")).rows;
      const known = new Map(migrations.map((m) => [m.name, m]));
      for (const row of applied) {
        const name = String(row["name"]);
        const migration = known.get(name);
        if (!migration) {
          throw new SchemaMismatchError(
            "SCHEMA_MISMATCH",
            `This SQLite database has Postel migration "${name}" applied, which this version of ` +
              "@postel/storage-sqlite does not ship: its schema is newer than this code. Upgrade " +
              "@postel/storage-sqlite in every process that shares the database.",
          );
        }
        if (migration.hash !== String(row["hash"])) {
          throw new SchemaMismatchError(
            "SCHEMA_MISMATCH",
            `Postel migration "${name}" recorded in this SQLite database differs from the one shipped ` +
              "with this version of @postel/storage-sqlite (sha-256 mismatch). Migrations are append-only; " +
              "use the same package version in every process that shares the database.",
          );
        }
        known.delete(name);
      }
      for (const migration of known.values()) {
        for (const statement of migration.statements) await tx.execute(statement);
        await tx.execute({
          sql: "INSERT INTO postel_migrations (name, hash, applied_at) VALUES (?, ?, ?)",
          // Bookkeeping only: no query compares against it, so the wall clock is fine here.
          args: [migration.name, migration.hash, Date.now()],
        });
      }
      await tx.commit();
    } catch (error) {
      throw translateError(error);
    } finally {
      tx.close();
    }
  });
}
