import type {
  AttemptRecord,
  DeliveryRecord,
  DeliveryStatus,
  MessageQuery,
  MessageRecord,
  PageRequest,
} from "@postel/core";
import type { Sql } from "postgres";
import {
  DELIVERY_COLUMNS,
  MESSAGE_COLUMNS,
  type RawRow,
  toAttempt,
  toDelivery,
  toMessage,
} from "../internal/rows.js";

export async function getMessage(sql: Sql, id: string): Promise<MessageRecord | null> {
  const rows = await sql<
    RawRow[]
  >`SELECT ${sql.unsafe(MESSAGE_COLUMNS)} FROM postel.messages m WHERE m.id = ${id}`;
  return rows[0] ? toMessage(rows[0]) : null;
}

/** Messages newest first (ids sort by creation time), filtered, after the `before` cursor (only the filters given reach the SQL). */
export async function listMessages(sql: Sql, query: MessageQuery): Promise<MessageRecord[]> {
  const empty = sql``;
  const rows = await sql<RawRow[]>`
    SELECT ${sql.unsafe(MESSAGE_COLUMNS)} FROM postel.messages m
    WHERE true
      ${query.status !== undefined ? sql`AND m.status = ${query.status}` : empty}
      ${query.type !== undefined ? sql`AND m.type = ${query.type}` : empty}
      ${query.tenantId !== undefined ? sql`AND m.tenant_id = ${query.tenantId}` : empty}
      ${query.since !== undefined ? sql`AND m.created_at >= ${query.since}::bigint` : empty}
      ${query.until !== undefined ? sql`AND m.created_at < ${query.until}::bigint` : empty}
      ${query.before !== undefined ? sql`AND m.id < ${query.before}` : empty}
    ORDER BY m.id DESC
    LIMIT ${query.limit}`;
  return rows.map((row) => toMessage(row));
}

/** Every delivery of a message, oldest first. */
export async function listDeliveries(sql: Sql, messageId: string): Promise<DeliveryRecord[]> {
  const rows = await sql<RawRow[]>`
    SELECT ${sql.unsafe(DELIVERY_COLUMNS)} FROM postel.deliveries d
    WHERE d.message_id = ${messageId} ORDER BY d.created_at, d.id`;
  return rows.map(toDelivery);
}

/** Every attempt of a message, by start time then attempt number. */
export async function listAttempts(sql: Sql, messageId: string): Promise<AttemptRecord[]> {
  const rows = await sql<RawRow[]>`
    SELECT * FROM postel.all_attempts WHERE message_id = ${messageId}
    ORDER BY started_at, attempt_number, id`;
  return rows.map(toAttempt);
}

/** Dead-lettered deliveries, newest first (by id, which sorts by creation time), after the `before` cursor. */
export async function listDeadLetters(
  sql: Sql,
  query: PageRequest & { endpointId?: string | undefined },
): Promise<DeliveryRecord[]> {
  const empty = sql``;
  const rows = await sql<RawRow[]>`
    SELECT ${sql.unsafe(DELIVERY_COLUMNS)} FROM postel.deliveries d
    WHERE d.status = 'dead-lettered'
      ${query.endpointId !== undefined ? sql`AND d.endpoint_id = ${query.endpointId}` : empty}
      ${query.before !== undefined ? sql`AND d.id < ${query.before}` : empty}
    ORDER BY d.id DESC
    LIMIT ${query.limit}`;
  return rows.map(toDelivery);
}

/** How many deliveries are in each status, optionally for one endpoint. */
export async function countDeliveries(
  sql: Sql,
  endpointId: string | undefined,
): Promise<Partial<Record<DeliveryStatus, number>>> {
  const rows = await sql<{ status: DeliveryStatus; n: string }[]>`
    SELECT status, count(*) AS n FROM postel.deliveries
    ${endpointId !== undefined ? sql`WHERE endpoint_id = ${endpointId}` : sql``}
    GROUP BY status`;
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
}
