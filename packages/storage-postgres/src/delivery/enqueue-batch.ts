import { type NewMessage, StorageUnavailableError } from "@postel/core/storage";
import type { Sql } from "postgres";
import { isSessionLost } from "../internal/connection-errors.js";
import type { QueryPool } from "../internal/query-pool.js";
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
 *
 * A session lost while an INSERT ran (a failover, a cut) leaves its commit unknown. The message is
 * then inserted once more, alone, on a new session: the ids are Postel's own, so meeting its own id
 * there means the first commit happened, and anything else is the definite answer. Only when that
 * second try fails too is the caller told the outcome is unknown (`StorageUnavailableError` with
 * `ambiguous: true`, advising an `idempotencyKey`), never that its input was bad.
 */
export function createEnqueueBatcher(pool: QueryPool, one: EnqueueOne): EnqueueOne {
  let pending: { message: NewMessage; settle: (result: Promise<{ id: string; reused: boolean }>) => void }[] =
    [];

  const flush = () => {
    const batch = pending;
    pending = [];
    for (let start = 0; start < batch.length; start += MAX_ROWS) {
      void insertBatch(batch.slice(start, start + MAX_ROWS));
    }
  };

  const alone = async (message: NewMessage) => {
    try {
      return await one(message);
    } catch (error) {
      if (!isSessionLost(error)) throw error;
      return again(message);
    }
  };

  const again = async (message: NewMessage) => {
    try {
      return await one(message);
    } catch (error) {
      if (isOwnMessage(error, message.id)) return { id: message.id, reused: false };
      throw new StorageUnavailableError(
        `The connection to PostgreSQL was lost while message ${message.id} was being stored, and Postel ` +
          "could not check afterwards whether its commit happened: it may or may not have been stored. " +
          "Send it again with an idempotencyKey (the same key both times), so that a second send cannot " +
          "store it twice.",
        { cause: error, ambiguous: true },
      );
    }
  };

  async function insertBatch(batch: typeof pending): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      only!.settle(alone(only!.message));
      return;
    }
    let inserted = new Set<string>();
    let failure: unknown;
    try {
      inserted = await pool.run((sql) =>
        insertRows(
          sql,
          batch.map(({ message }) => message),
        ),
      );
    } catch (error) {
      // e.g. a duplicate id: the one-by-one path reports it to its caller alone.
      failure = error;
    }
    const lost = failure !== undefined && isSessionLost(failure);
    for (const { message, settle } of batch) {
      settle(
        inserted.has(message.id)
          ? Promise.resolve({ id: message.id, reused: false })
          : lost
            ? again(message)
            : alone(message),
      );
    }
  }

  return (message) =>
    message.idempotencyKey !== null
      ? alone(message)
      : new Promise((resolve, reject) => {
          if (pending.length === 0) setImmediate(flush);
          pending.push({ message, settle: (result) => result.then(resolve, reject) });
        });
}

/** A message's own id met again: an earlier try of this very send committed. */
function isOwnMessage(error: unknown, id: string): boolean {
  const pg = error as { code?: unknown; constraint_name?: unknown; detail?: unknown } | null;
  return (
    pg?.code === "23505" &&
    pg.constraint_name === "messages_pkey" &&
    (typeof pg.detail !== "string" || pg.detail.includes(`(${id})`))
  );
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
    // A test event (sendTest's enqueue) batched beside other sends. Absent otherwise, so the JSON of
    // every other row stays as it was: json_to_recordset reads a missing key as NULL.
    ...(m.testEndpointId !== undefined && { test_endpoint_id: m.testEndpointId }),
    ...(m.orderingKey !== undefined && { ordering_key: m.orderingKey }),
  }));
  const rows = await sql<{ id: string }[]>`
    WITH inserted AS (
      INSERT INTO postel.messages (id, type, payload, tenant_id, idempotency_key, status, created_at, expires_at,
        trace_context, test_endpoint_id, ordering_key)
      SELECT i.id, i.type, i.payload, i.tenant_id, i.idempotency_key, 'pending', i.created_at, i.expires_at,
        i.trace_context, i.test_endpoint_id, i.ordering_key
      FROM json_to_recordset(${asJson(input)}::text::json) AS i(id text, type text, payload text,
        tenant_id text, idempotency_key text, created_at bigint, expires_at bigint, trace_context text,
        test_endpoint_id text, ordering_key text)
      RETURNING id
    ), woken AS (
      SELECT pg_notify(${WAKE_CHANNEL}, '') FROM (SELECT 1 FROM inserted LIMIT 1) AS any_row
    )
    SELECT id FROM inserted, (SELECT count(*) FROM woken) AS w`;
  return new Set(rows.map((row) => row.id));
}
