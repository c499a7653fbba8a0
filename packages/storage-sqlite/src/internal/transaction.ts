import type { InValue, Transaction } from "@libsql/client";
import { compileStatement, type Statement, StatementParam } from "@postel/core/storage";
import { translateError } from "./database.js";

/**
 * A drizzle libsql transaction, as passed to `db.transaction(async (tx) => …)`. Only `all` is used,
 * so any schema's transaction of any drizzle-orm version fits (drizzle-orm is an optional peer).
 */
export interface DrizzleSqliteTransaction {
  all(query: never): Promise<unknown[]>;
}

/**
 * What `send(event, { tx })` accepts with SQLite: a libsql `Transaction`
 * (`await client.transaction("write")`) or a drizzle libsql transaction. The message is inserted on it,
 * so it commits or rolls back with the caller's own writes.
 */
export type SqliteTransaction = Transaction | DrizzleSqliteTransaction;

/** A statement as a libsql statement with positional arguments. */
export function toStatement(query: Statement): { sql: string; args: InValue[] } {
  const { text, params } = compileStatement(query, () => "?");
  return { sql: text, args: params as InValue[] };
}

/** The same statement as drizzle `sql`, for a drizzle transaction (the app's drizzle, so present). */
async function toDrizzle(query: Statement): Promise<unknown> {
  const { sql: drizzleSql } = await import("drizzle-orm");
  return drizzleSql.join(
    query.chunks.map((chunk) =>
      chunk instanceof StatementParam ? drizzleSql.param(chunk.value) : drizzleSql.raw(chunk),
    ),
  );
}

function isDrizzle(tx: SqliteTransaction): tx is DrizzleSqliteTransaction {
  return typeof (tx as Partial<DrizzleSqliteTransaction>).all === "function";
}

/** Run a query on the caller's transaction, whichever kind it is, and return its rows. */
export async function rowsOn(tx: SqliteTransaction, query: Statement): Promise<Record<string, unknown>[]> {
  try {
    if (isDrizzle(tx)) return (await tx.all((await toDrizzle(query)) as never)) as Record<string, unknown>[];
    return (await tx.execute(toStatement(query))).rows;
  } catch (error) {
    throw translateError(error);
  }
}
