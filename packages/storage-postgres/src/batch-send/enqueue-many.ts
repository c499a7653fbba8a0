import { type NewMessage, PostelError, planEnqueueMany } from "@postel/core/storage";
import type { Sql } from "postgres";
import { begin } from "../internal/begin.js";
import type { PostgresTransaction } from "../internal/transaction.js";
import { asJson, epochMs } from "../internal/rows.js";
import { statement as sql, type Statement } from "../internal/statement.js";
import { type Execute, executorFor } from "../internal/transaction.js";
import { WAKE_CHANNEL } from "../delivery/enqueue.js";

// One INSERT per chunk: a batch of 10,000 small events is two statements, and no statement carries
// more than about 8 MiB of JSON input however large the payloads are.
const MAX_ROWS = 5_000;
const MAX_CHARS = 8 * 1024 * 1024;

/**
 * `enqueueMany`: one `INSERT … SELECT unnest(…)` per chunk of rows (`ON CONFLICT DO NOTHING` when it
 * has keys), then at most one SELECT for the idempotency keys that were already taken, all in `tx`
 * or in one transaction of its own (none when there is one INSERT, which is atomic by itself). Only
 * the first message of each key is inserted, and keyed rows go in key order, so two batches that
 * share keys wait for each other in the same order and never deadlock.
 * Each chunk that inserts NOTIFYs `postel_wake`; Postgres folds identical notifications of one
 * transaction into one, delivered on commit.
 */
export async function enqueueMany(
  pool: Sql,
  messages: readonly NewMessage[],
  tx: PostgresTransaction | undefined,
): Promise<{ id: string; reused: boolean }[]> {
  if (messages.length === 0) return [];
  const { first, chunks } = planEnqueueMany(messages, { maxRows: MAX_ROWS, maxChars: MAX_CHARS });
  const inserts = chunks.map(insertChunk);
  if (tx !== undefined) return insertAll(executorFor(pool, tx), messages, first, inserts);
  // One INSERT is atomic by itself (the SELECT of taken keys after it only reads): no BEGIN/COMMIT.
  if (inserts.length === 1) return insertAll(executorFor(pool, undefined), messages, first, inserts);
  return begin(pool, (own) => insertAll(executorFor(pool, own), messages, first, inserts));
}

async function insertAll(
  execute: Execute,
  messages: readonly NewMessage[],
  first: Map<string, NewMessage>,
  inserts: Statement[],
): Promise<{ id: string; reused: boolean }[]> {
  // Rows without a key are inserted whenever the statement succeeds; RETURNING names the keyed ones
  // (a chunk without keys returns only its NOTIFY's row, which has no id).
  const inserted = new Set<string>();
  for (const insert of inserts) {
    for (const row of await execute(insert)) if (typeof row["id"] === "string") inserted.add(row["id"]);
  }

  // Keys another message already holds: read afresh, after any transaction holding them committed.
  const taken = [...first.entries()].filter(([, message]) => !inserted.has(message.id)).map(([key]) => key);
  const stored = new Map<string, string>();
  if (taken.length > 0) {
    const found = await execute(sql`
      SELECT id, idempotency_key AS key FROM postel.messages
      WHERE idempotency_key IN (SELECT json_array_elements_text(${asJson(taken)}::text::json))`);
    // Result columns are single lowercase words: a Kysely transaction's CamelCasePlugin renames others.
    for (const row of found) stored.set(row["key"] as string, row["id"] as string);
  }

  return messages.map((message) => {
    const key = message.idempotencyKey;
    if (key === null) return { id: message.id, reused: false };
    const owner = first.get(key)!;
    if (inserted.has(owner.id)) return { id: owner.id, reused: owner !== message };
    const id = stored.get(key);
    if (id !== undefined) return { id, reused: true };
    throw new PostelError(
      "IDEMPOTENCY_CONFLICT",
      `Another transaction holds idempotency key "${key}" but its message is not visible to this one ` +
        "(REPEATABLE READ or SERIALIZABLE isolation); retry the batch in a new transaction.",
    );
  });
}

// The rows travel as one array per column, read with unnest: a third less time than json_to_recordset,
// which must parse every payload's quotes escaped a second time inside the JSON of the rows. Called
// in the select list, unnest streams the rows into the INSERT; FROM unnest(…) would first copy them
// all, payloads included, into a tuplestore.
function insertChunk(chunk: NewMessage[]): Statement {
  const text = (pick: (m: NewMessage) => string | null) => textArray(chunk.map(pick));
  const bigint = (pick: (m: NewMessage) => number | null) => chunk.map(pick);
  // Only test events (sendTest) carry one, never a batch of sends in practice: no array at all then.
  // NULL::text[] unnests to no row, which unnest in the select list pads with NULL beside the others.
  const testEndpoints = chunk.some((m) => m.testEndpointId !== undefined)
    ? text((m) => m.testEndpointId ?? null)
    : null;
  // Likewise only ordered sends carry an ordering key.
  const orderingKeys = chunk.some((m) => m.orderingKey !== undefined)
    ? text((m) => m.orderingKey ?? null)
    : null;
  const insert = sql`
      INSERT INTO postel.messages (id, type, payload, tenant_id, idempotency_key, status, created_at, expires_at,
        trace_context, test_endpoint_id, ordering_key)
      SELECT unnest(${text((m) => m.id)}::text[]), unnest(${text((m) => m.type)}::text[]),
        unnest(${text((m) => m.payload)}::text[]), unnest(${text((m) => m.tenantId)}::text[]),
        unnest(${text((m) => m.idempotencyKey)}::text[]), 'pending',
        unnest(${bigint((m) => epochMs(m.createdAt))}::bigint[]),
        unnest(${bigint((m) => (m.expiresAt === null ? null : epochMs(m.expiresAt)))}::bigint[]),
        unnest(${text((m) => m.traceContext ?? null)}::text[]), unnest(${testEndpoints}::text[]),
        unnest(${orderingKeys}::text[])`;
  // Rows without a key cannot conflict, and ON CONFLICT would still insert each one speculatively (a
  // lock and one more WAL record per row). If the INSERT fails, so does the statement, NOTIFY and all.
  if (chunk.every((m) => m.idempotencyKey === null)) {
    return sql`WITH inserted AS (${insert}) SELECT pg_notify(${WAKE_CHANNEL}, '')::text AS notified`;
  }
  return sql`
    WITH inserted AS (${insert}
      ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING id, idempotency_key
    ), woken AS (
      SELECT pg_notify(${WAKE_CHANNEL}, '') FROM (SELECT 1 FROM inserted LIMIT 1) AS any_row
    )
    SELECT id FROM inserted, (SELECT count(*) FROM woken) AS w WHERE idempotency_key IS NOT NULL`;
}

// What JSON.stringify escapes in a way a PostgreSQL array literal reads otherwise (as \n, \u0000,
// \ud800): control characters, and lone surrogates (half of a UTF-16 pair).
const ESCAPED_OTHERWISE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  /[\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A text column as a PostgreSQL array literal, written by `JSON.stringify`: for strings without
 * control characters or lone surrogates, JSON's quoting (`"…"`, `\"`, `\\`, `null`) is the literal's,
 * and native code writes it many times faster than postgres.js escapes each element with two regular
 * expressions. Any other column goes as an array, for postgres.js to encode.
 */
function textArray(values: (string | null)[]): string | (string | null)[] {
  if (values.some((value) => value !== null && ESCAPED_OTHERWISE.test(value))) return values;
  return `{${JSON.stringify(values).slice(1, -1)}}`;
}
