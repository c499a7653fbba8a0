import { PostelError, type NewMessage } from "@postel/core/storage";
import type { Sql } from "postgres";
import { executorFor, type PostgresTransaction } from "../internal/transaction.js";
import { epochMs } from "../internal/rows.js";
import { statement as sql } from "../internal/statement.js";

/** The channel `enqueue` notifies and `subscribe` listens on. */
export const WAKE_CHANNEL = "postel_wake";

/**
 * One INSERT that also NOTIFYs `postel_wake` when it inserted (delivered on commit, so a rolled-back
 * send wakes nobody). On an idempotency-key conflict nothing is written and the existing id returned.
 */
export async function enqueue(
  pool: Sql,
  message: NewMessage,
  tx: PostgresTransaction | undefined,
): Promise<{ id: string; reused: boolean }> {
  const execute = executorFor(pool, tx);
  const expiresAt = message.expiresAt === null ? null : epochMs(message.expiresAt);
  const inserted = await execute(sql`
    WITH inserted AS (
      INSERT INTO postel.messages (id, type, payload, tenant_id, idempotency_key, status, created_at, expires_at,
        trace_context, test_endpoint_id, ordering_key)
      VALUES (${message.id}, ${message.type}, ${message.payload}, ${message.tenantId}, ${message.idempotencyKey},
        'pending', ${epochMs(message.createdAt)}::bigint, ${expiresAt}::bigint, ${message.traceContext ?? null},
        ${message.testEndpointId ?? null}, ${message.orderingKey ?? null})
      ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING id
    )
    SELECT id, pg_notify(${WAKE_CHANNEL}, '')::text AS notified FROM inserted`);
  const row = inserted[0];
  if (row) return { id: row["id"] as string, reused: false };

  // The conflicting row may have been committed after this statement's snapshot: read it afresh.
  const existing = await execute(
    sql`SELECT id FROM postel.messages WHERE idempotency_key = ${message.idempotencyKey}`,
  );
  const found = existing[0];
  if (found) return { id: found["id"] as string, reused: true };
  throw new PostelError(
    "IDEMPOTENCY_CONFLICT",
    `Another transaction holds idempotency key "${message.idempotencyKey}" but its message is not ` +
      "visible to this one (REPEATABLE READ or SERIALIZABLE isolation); retry the send in a new transaction.",
  );
}
