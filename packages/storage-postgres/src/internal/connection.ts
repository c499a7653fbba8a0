import type { PostgresJsDatabase, PostgresJsQueryResultHKT } from "drizzle-orm/postgres-js";
import type { PgTransaction } from "drizzle-orm/pg-core";
import type { TablesRelationalConfig } from "drizzle-orm";
import postgres, { type Sql, type TransactionSql } from "postgres";

/** A drizzle database on postgres.js, with or without a relational schema. */
export type PostgresDrizzle = PostgresJsDatabase<Record<string, unknown>> & { $client: Sql };

/** A drizzle transaction opened with `db.transaction(async (tx) => ...)` on postgres.js. */
export type DrizzleTransaction = PgTransaction<
  PostgresJsQueryResultHKT,
  Record<string, unknown>,
  TablesRelationalConfig
>;

/** What `send(event, { tx })` accepts: a postgres.js `sql.begin` handle or a drizzle transaction. */
export type PostgresTransaction = TransactionSql | DrizzleTransaction;

/** Where Postel's queries go: a connection string (Postel owns the pool), or the app's own pool. */
export type PostgresConnection = { url: string } | { sql: Sql } | { db: PostgresDrizzle };

/** The pool to use and whether Postel opened it (and so must end it on `close()`). */
export interface ResolvedConnection {
  sql: Sql;
  owned: boolean;
}

export function resolveConnection(options: PostgresConnection): ResolvedConnection {
  if ("url" in options) {
    // Postel's own pool: quiet notices such as "relation already exists, skipping".
    return { sql: postgres(options.url, { onnotice: () => {} }), owned: true };
  }
  if ("sql" in options) return { sql: options.sql, owned: false };
  return { sql: options.db.$client, owned: false };
}

/** postgres.js transaction handles are callable tagged templates; drizzle's are objects. */
export function isPostgresJsTransaction(tx: PostgresTransaction): tx is TransactionSql {
  return typeof tx === "function";
}
