import { SchemaMismatchError } from "@postel/core/storage";

// SQLSTATEs meaning Postel's tables or columns are not there: undefined_table, undefined_column,
// invalid_schema_name.
const NOT_MIGRATED = new Set(["42P01", "42703", "3F000"]);

/** Rethrows "relation postel.x does not exist" and friends as `SchemaMismatchError` with the fix. */
export function asSchemaError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !NOT_MIGRATED.has(code)) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new SchemaMismatchError(
    "SCHEMA_MISMATCH",
    `Postel's Postgres schema is missing or out of date (${detail}). ` +
      "Call `await storage.migrate()` at startup, or create PostgresStorage without `migrate: false` " +
      "so it migrates on first use.",
    { cause: error },
  );
}
