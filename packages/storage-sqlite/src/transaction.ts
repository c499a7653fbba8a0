import type { InValue, Transaction } from "@libsql/client";
import {
  compileStatement,
  type NewMessage,
  type Statement,
  StatementParam,
  statement as sql,
} from "@postel/core/storage";
import type { Db } from "./internal/database.js";
import { translateError } from "./internal/database.js";

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

/** Insert the message unless its idempotency key is taken; returns its id only when inserted. */
function insertMessage(m: NewMessage): Statement {
  return sql`INSERT INTO postel_messages (id, type, payload, tenant_id, idempotency_key, status, created_at, expires_at,
      trace_context, test_endpoint_id)
    VALUES (${m.id}, ${m.type}, ${m.payload}, ${m.tenantId}, ${m.idempotencyKey}, 'pending', ${m.createdAt}, ${m.expiresAt},
      ${m.traceContext ?? null}, ${m.testEndpointId ?? null})
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id`;
}

function messageIdForKey(key: string): Statement {
  return sql`SELECT id FROM postel_messages WHERE idempotency_key = ${key}`;
}

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

async function idsOn(tx: SqliteTransaction, query: Statement): Promise<string[]> {
  return (await rowsOn(tx, query)).map((row) => String(row["id"]));
}

/**
 * `enqueue`: one INSERT … ON CONFLICT DO NOTHING; on an idempotency-key conflict, the existing id.
 * With `tx` both statements run on the caller's transaction (and never trigger migrations, whose
 * write lock would wait for that very transaction); without it they run as one write batch.
 */
export async function enqueueMessage(
  db: Db,
  message: NewMessage,
  tx: SqliteTransaction | undefined,
): Promise<{ id: string; reused: boolean }> {
  const key = message.idempotencyKey;
  if (tx !== undefined) {
    const [inserted] = await idsOn(tx, insertMessage(message));
    if (inserted !== undefined || key === null) return { id: message.id, reused: false };
    const [existing] = await idsOn(tx, messageIdForKey(key));
    return { id: existing ?? message.id, reused: existing !== undefined };
  }
  const statements = [toStatement(insertMessage(message))];
  if (key !== null) statements.push(toStatement(messageIdForKey(key)));
  const [insert, lookup] = await db.write(statements);
  if (insert !== undefined && insert.rows.length > 0) return { id: message.id, reused: false };
  const existing = lookup?.rows[0]?.["id"];
  return { id: existing === undefined ? message.id : String(existing), reused: existing !== undefined };
}
