import type {
  AttemptRecord,
  DeadLetter,
  DeadLetterQuery,
  MessageQuery,
  MessageRecord,
} from "@postel/core/storage";
import type { Sql } from "postgres";
import { epochMs, MESSAGE_COLUMNS, type RawRow, toAttempt, toMessage } from "../internal/rows.js";

/** The statement of `listMessages` (exported for the plan tests). */
export function listMessagesStatement(sql: Sql, query: MessageQuery) {
  const empty = sql``;
  return sql<RawRow[]>`
    SELECT ${sql.unsafe(MESSAGE_COLUMNS)} FROM postel.messages m
    WHERE true
      ${query.status !== undefined ? sql`AND m.status = ${query.status}` : empty}
      ${query.type !== undefined ? sql`AND m.type = ${query.type}` : empty}
      ${query.tenantId !== undefined ? sql`AND m.tenant_id = ${query.tenantId}` : empty}
      ${query.since !== undefined ? sql`AND m.created_at >= ${query.since}::bigint` : empty}
      ${query.until !== undefined ? sql`AND m.created_at < ${query.until}::bigint` : empty}
      ${query.after !== undefined ? sql`AND m.id < ${query.after}` : empty}
      ${query.from !== undefined ? sql`AND m.id >= ${query.from}` : empty}
    ORDER BY m.id DESC
    LIMIT ${query.limit}`;
}

/** The lowest of the `size` newest message ids below `after`, or null when fewer are left (an index-only walk of the key). */
export async function messageWindow(
  sql: Sql,
  after: string | undefined,
  size: number,
): Promise<string | null> {
  const [row] = await sql<{ low: string | null; n: string }[]>`
    SELECT min(id) AS low, count(*) AS n FROM (
      SELECT id FROM postel.messages ${after !== undefined ? sql`WHERE id < ${after}` : sql``}
      ORDER BY id DESC LIMIT ${size}
    ) w`;
  return row !== undefined && Number(row.n) >= size ? row.low : null;
}

/** Messages newest first (ids sort by creation time), filtered, past the `after` id (only the filters given reach the SQL). */
export async function listMessages(sql: Sql, query: MessageQuery): Promise<MessageRecord[]> {
  return (await listMessagesStatement(sql, query)).map(toMessage);
}

/** Every attempt of a message, by start time then attempt number. */
export async function listAttempts(sql: Sql, messageId: string): Promise<AttemptRecord[]> {
  const rows = await sql<RawRow[]>`
    SELECT * FROM postel.all_attempts WHERE message_id = ${messageId}
    ORDER BY started_at, attempt_number, id`;
  return rows.map(toAttempt);
}

/**
 * The statement of `listDeadLetters` (exported for the plan tests): the rows of the seeds'
 * `dead_letter` view, read so that the plan stays flat whatever the history. The page of deliveries
 * comes first, walking deliveries_dead_lettered_idx backwards (about `limit` dead letters read when
 * unfiltered); only then is each one's message looked up by primary key (a join over the view let the
 * planner hash a scan of every message).
 */
export function listDeadLettersStatement(sql: Sql, query: DeadLetterQuery) {
  const empty = sql``;
  return sql<RawRow[]>`
    SELECT d.status, d.id AS delivery_id, d.message_id, d.endpoint_id, d.webhook_id, m.type AS event_type, m.tenant_id,
      d.attempts_made, d.last_error, m.created_at AS message_created_at, d.updated_at AS dead_lettered_at
    FROM (
      SELECT d.status, d.id, d.message_id, d.endpoint_id, d.webhook_id, d.attempts_made, d.last_error, d.updated_at
      FROM postel.deliveries d
      -- A literal, not a parameter: each status has its own partial index, which a generic plan of a
      -- parameter could not pick.
      WHERE d.status = ${sql.unsafe(query.status === "failed" ? "'failed'" : "'dead-lettered'")}
        ${query.endpointId !== undefined ? sql`AND d.endpoint_id = ${query.endpointId}` : empty}
        ${query.since !== undefined ? sql`AND d.updated_at >= ${epochMs(query.since)}::bigint` : empty}
        ${query.until !== undefined ? sql`AND d.updated_at < ${epochMs(query.until)}::bigint` : empty}
        ${query.after !== undefined ? sql`AND d.id < ${query.after}` : empty}
      ORDER BY d.id DESC
      LIMIT ${query.limit}
    ) d
    CROSS JOIN LATERAL (
      SELECT m.type, m.tenant_id, m.created_at FROM postel.messages m WHERE m.id = d.message_id OFFSET 0
    ) m
    ORDER BY d.id DESC`;
}

/** Dead-lettered (or failed) deliveries with their message's type and tenant, newest delivery first, past the `after` id. */
export async function listDeadLetters(sql: Sql, query: DeadLetterQuery): Promise<DeadLetter[]> {
  const rows = await listDeadLettersStatement(sql, query);
  return rows.map((row) => ({
    status: row["status"] === "failed" ? "failed" : "dead-lettered",
    deliveryId: String(row["delivery_id"]),
    messageId: String(row["message_id"]),
    endpointId: String(row["endpoint_id"]),
    webhookId: String(row["webhook_id"]),
    type: String(row["event_type"]),
    tenantId: row["tenant_id"] === null ? null : String(row["tenant_id"]),
    attemptsMade: Number(row["attempts_made"]),
    lastError: row["last_error"] === null ? null : String(row["last_error"]),
    createdAt: Number(row["message_created_at"]),
    deadLetteredAt: Number(row["dead_lettered_at"]),
  }));
}
