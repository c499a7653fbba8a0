import type { NewMessage } from "@postel/core";
import type { Sql } from "postgres";
import { asJson, epochMs } from "../internal/rows.js";
import { WAKE_CHANNEL } from "./enqueue.js";

/** Enqueues one message outside any transaction; the result is what `enqueue` returns. */
export type EnqueueOne = (message: NewMessage) => Promise<{ id: string; reused: boolean }>;

// Rows per INSERT: big enough to amortise a commit, small enough to spread a burst over the pool.
const MAX_ROWS = 250;

/**
 * Group commit for `send()` calls made without a transaction: the calls issued in the same turn of
 * the event loop become one multi-row INSERT (one commit, one NOTIFY) per `MAX_ROWS`. A lone caller
 * waits no longer than before (the batch leaves on `setImmediate`); 10,000 concurrent callers share
 * 40 commits instead of queueing 10,000. Messages with an idempotency key go alone through `one`: an
 * INSERT that meets a key held by an open transaction waits for it, and must not make unrelated sends
 * wait too. If a batch fails (a duplicate id, any error), each of its messages is retried alone
 * through `one`, which gives it exactly the answer or the error it would have had by itself.
 */
export function createEnqueueBatcher(sql: Sql, one: EnqueueOne): EnqueueOne {
  let pending: { message: NewMessage; settle: (result: Promise<{ id: string; reused: boolean }>) => void }[] =
    [];

  const flush = () => {
    const batch = pending;
    pending = [];
    for (let start = 0; start < batch.length; start += MAX_ROWS) {
      void insertBatch(batch.slice(start, start + MAX_ROWS));
    }
  };

  async function insertBatch(batch: typeof pending): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      only!.settle(one(only!.message));
      return;
    }
    let inserted = new Set<string>();
    try {
      inserted = await insertRows(
        sql,
        batch.map(({ message }) => message),
      );
    } catch {
      // e.g. a duplicate id: the one-by-one path reports it to its caller alone.
    }
    for (const { message, settle } of batch) {
      settle(inserted.has(message.id) ? Promise.resolve({ id: message.id, reused: false }) : one(message));
    }
  }

  return (message) =>
    message.idempotencyKey !== null
      ? one(message)
      : new Promise((resolve, reject) => {
          if (pending.length === 0) setImmediate(flush);
          pending.push({ message, settle: (result) => result.then(resolve, reject) });
        });
}

async function insertRows(sql: Sql, messages: NewMessage[]): Promise<Set<string>> {
  const input = messages.map((m) => ({
    id: m.id,
    type: m.type,
    payload: m.payload,
    tenant_id: m.tenantId,
    idempotency_key: m.idempotencyKey,
    created_at: epochMs(m.createdAt),
    expires_at: m.expiresAt === null ? null : epochMs(m.expiresAt),
    trace_context: m.traceContext ?? null,
  }));
  const rows = await sql<{ id: string }[]>`
    WITH inserted AS (
      INSERT INTO postel.messages (id, type, payload, tenant_id, idempotency_key, status, created_at, expires_at,
        trace_context)
      SELECT i.id, i.type, i.payload, i.tenant_id, i.idempotency_key, 'pending', i.created_at, i.expires_at,
        i.trace_context
      FROM json_to_recordset(${asJson(input)}::text::json) AS i(id text, type text, payload text,
        tenant_id text, idempotency_key text, created_at bigint, expires_at bigint, trace_context text)
      RETURNING id
    ), woken AS (
      SELECT pg_notify(${WAKE_CHANNEL}, '') FROM (SELECT 1 FROM inserted LIMIT 1) AS any_row
    )
    SELECT id FROM inserted, (SELECT count(*) FROM woken) AS w`;
  return new Set(rows.map((row) => row.id));
}
