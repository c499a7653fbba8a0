import { SchemaMismatchError } from "@postel/core/storage";
import type { Sql } from "postgres";
import { begin } from "./internal/begin.js";
import { assertPostgresJs } from "./internal/connection.js";
import { asConnectionError } from "./internal/connection-errors.js";
import { type MigrationFile, loadMigrations } from "./internal/migration-files.js";
import { asSchemaError } from "./internal/schema-errors.js";

// Fixed key of the transaction-scoped advisory lock that serialises migrate() across processes
// ("postel" in ASCII). Passed as text so it never goes through a JS number.
const MIGRATION_LOCK_KEY = "123649299019116";

interface AppliedMigration {
  name: string;
  hash: string;
}

/**
 * Creates or upgrades Postel's schema (`postel.*`) with the SQL migrations shipped in this package.
 * Runs in one transaction holding `pg_advisory_xact_lock`, so concurrent calls from several processes
 * are safe; records what it applied in `postel.migrations` (never the host's drizzle journal).
 * Throws `SchemaMismatchError` when the database was migrated by a newer version of this package, and
 * `StorageUnavailableError` when the database cannot be reached.
 *
 * @example
 * await migrate(postgres(process.env.DATABASE_URL!));
 */
export async function migrate(sql: Sql, now: () => number = Date.now): Promise<void> {
  assertPostgresJs(sql, "migrate() argument");
  const files = await loadMigrations();
  const migrating = begin(sql, async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}::bigint)`;
    await tx`SET LOCAL client_min_messages = warning`;
    await tx`CREATE SCHEMA IF NOT EXISTS postel`;
    await tx`
      CREATE TABLE IF NOT EXISTS postel.migrations (
        name text PRIMARY KEY,
        hash text NOT NULL,
        applied_at bigint NOT NULL
      )`;
    const applied = await tx<AppliedMigration[]>`SELECT name, hash FROM postel.migrations`;
    const pending = pendingMigrations(files, applied);
    for (const file of pending) {
      await tx.unsafe(file.sql);
      await tx`
        INSERT INTO postel.migrations (name, hash, applied_at)
        VALUES (${file.name}, ${file.hash}, ${Math.round(now())})`;
    }
    await tx`
      INSERT INTO postel.meta (key, value) VALUES ('schema_version', ${files.length})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  });
  await migrating.catch((error: unknown) => {
    throw asConnectionError(error, sql);
  });
}

/**
 * Checks, without changing anything, that the database holds exactly the migrations this code ships
 * (used on first use when `migrate: false`). Throws `SchemaMismatchError` otherwise.
 */
export async function assertMigrated(sql: Sql): Promise<void> {
  assertPostgresJs(sql, "assertMigrated() argument");
  const files = await loadMigrations();
  let applied: AppliedMigration[];
  try {
    applied = await sql<AppliedMigration[]>`SELECT name, hash FROM postel.migrations`;
  } catch (error) {
    throw asConnectionError(asSchemaError(error), sql);
  }
  const pending = pendingMigrations(files, applied);
  if (pending.length > 0) {
    throw new SchemaMismatchError(
      "SCHEMA_MISMATCH",
      `Postel's Postgres schema is not up to date: ${pending.length} migration(s) not applied ` +
        `(${pending.map((file) => file.name).join(", ")}). Call \`await storage.migrate()\` at startup, ` +
        "or create PostgresStorage without `migrate: false`.",
    );
  }
}

function pendingMigrations(files: MigrationFile[], applied: readonly AppliedMigration[]): MigrationFile[] {
  const known = new Map(files.map((file) => [file.name, file]));
  const unknown = applied.filter((row) => !known.has(row.name)).map((row) => row.name);
  if (unknown.length > 0) {
    throw new SchemaMismatchError(
      "SCHEMA_MISMATCH",
      `This database was migrated by a newer @postel/storage-postgres: it has migration(s) ` +
        `${unknown.join(", ")} that this version does not know. Upgrade @postel/storage-postgres ` +
        "in this application (never run an older version against a newer schema).",
    );
  }
  const changed = applied.filter((row) => known.get(row.name)?.hash !== row.hash).map((row) => row.name);
  if (changed.length > 0) {
    throw new SchemaMismatchError(
      "SCHEMA_MISMATCH",
      `Migration(s) ${changed.join(", ")} recorded in postel.migrations differ from the SQL shipped ` +
        "in @postel/storage-postgres (a shipped migration was edited). Restore the original files.",
    );
  }
  const done = new Set(applied.map((row) => row.name));
  return files.filter((file) => !done.has(file.name));
}
