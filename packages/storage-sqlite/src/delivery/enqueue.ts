import { type NewMessage, type Statement, statement as sql } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { rowsOn, type SqliteTransaction, toStatement } from "../internal/transaction.js";

/** Insert the message unless its idempotency key is taken; returns its id only when inserted. */
function insertMessage(m: NewMessage): Statement {
  return sql`INSERT INTO postel_messages (id, type, payload, tenant_id, idempotency_key, status, created_at, expires_at,
      trace_context, test_endpoint_id, ordering_key)
    VALUES (${m.id}, ${m.type}, ${m.payload}, ${m.tenantId}, ${m.idempotencyKey}, 'pending', ${m.createdAt}, ${m.expiresAt},
      ${m.traceContext ?? null}, ${m.testEndpointId ?? null}, ${m.orderingKey ?? null})
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id`;
}

function messageIdForKey(key: string): Statement {
  return sql`SELECT id FROM postel_messages WHERE idempotency_key = ${key}`;
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
