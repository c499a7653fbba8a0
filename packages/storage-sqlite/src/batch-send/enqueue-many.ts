import { type NewMessage, planEnqueueMany, type Statement, statement as sql } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { rowsOn, type SqliteTransaction, toStatement } from "../internal/transaction.js";

// Rows per INSERT, and the most payload characters one statement carries: a batch of 10,000 small
// events is two statements.
const MAX_ROWS = 5_000;
const MAX_CHARS = 8 * 1024 * 1024;

/**
 * `enqueueMany`: one `INSERT … SELECT FROM json_each(?) … ON CONFLICT DO NOTHING` per chunk of
 * messages, inserting only the first message of each idempotency key, then one SELECT of the ids
 * stored under the batch's keys. Without `tx` they run as one write transaction (`BEGIN IMMEDIATE`);
 * with it, on the caller's transaction (never triggering migrations, as for `enqueue`).
 */
export async function enqueueMany(
  db: Db,
  messages: readonly NewMessage[],
  tx: SqliteTransaction | undefined,
): Promise<{ id: string; reused: boolean }[]> {
  if (messages.length === 0) return [];
  const { first, chunks } = planEnqueueMany(messages, { maxRows: MAX_ROWS, maxChars: MAX_CHARS });
  const inserts = chunks.map(insertChunk);
  const lookup = first.size === 0 ? undefined : idsForKeys([...first.keys()]);

  let stored: Record<string, unknown>[] = [];
  if (tx === undefined) {
    const statements = [...inserts, ...(lookup ? [lookup] : [])].map(toStatement);
    const results = await db.write(statements);
    if (lookup) stored = results.at(-1)?.rows ?? [];
  } else {
    for (const insert of inserts) await rowsOn(tx, insert);
    if (lookup) stored = await rowsOn(tx, lookup);
  }
  // After the inserts, every key of the batch is stored: by its first message here, or from before.
  const idByKey = new Map(stored.map((row) => [String(row["idempotency_key"]), String(row["id"])]));
  return messages.map((message) => {
    const key = message.idempotencyKey;
    if (key === null) return { id: message.id, reused: false };
    const id = idByKey.get(key) ?? message.id;
    return { id, reused: id !== message.id };
  });
}

function insertChunk(chunk: NewMessage[]): Statement {
  const input = JSON.stringify(
    chunk.map((m) => [
      m.id,
      m.type,
      m.payload,
      m.tenantId,
      m.idempotencyKey,
      m.createdAt,
      m.expiresAt,
      m.traceContext ?? null,
      m.testEndpointId ?? null,
      m.orderingKey ?? null,
    ]),
  );
  // Each row is materialized once (see jsonRows), then read by position. `WHERE true` tells SQLite's
  // parser that ON CONFLICT belongs to the INSERT, not to a join of the SELECT.
  return sql`INSERT INTO postel_messages (id, type, payload, tenant_id, idempotency_key, status, created_at, expires_at,
      trace_context, test_endpoint_id, ordering_key)
    SELECT v->>0, v->>1, v->>2, v->>3, v->>4, 'pending', v->>5, v->>6, v->>7, v->>8, v->>9
    FROM (WITH input AS MATERIALIZED (SELECT key AS idx, value AS v FROM json_each(${input}))
      SELECT v FROM input ORDER BY idx)
    WHERE true
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`;
}

function idsForKeys(keys: string[]): Statement {
  return sql`SELECT id, idempotency_key FROM postel_messages
    WHERE idempotency_key IN (SELECT value FROM json_each(${JSON.stringify(keys)}))`;
}
