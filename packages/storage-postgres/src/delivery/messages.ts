import type { DeliveryRecord, MessageRecord } from "@postel/core/storage";
import type { Sql } from "postgres";
import { DELIVERY_COLUMNS, MESSAGE_COLUMNS, type RawRow, toDelivery, toMessage } from "../internal/rows.js";

/** One message by id, or null. */
export async function getMessage(sql: Sql, id: string): Promise<MessageRecord | null> {
  const rows = await sql<
    RawRow[]
  >`SELECT ${sql.unsafe(MESSAGE_COLUMNS)} FROM postel.messages m WHERE m.id = ${id}`;
  return rows[0] ? toMessage(rows[0]) : null;
}

/** Every delivery of a message, oldest first. */
export async function listDeliveries(sql: Sql, messageId: string): Promise<DeliveryRecord[]> {
  const rows = await sql<RawRow[]>`
    SELECT ${sql.unsafe(DELIVERY_COLUMNS)} FROM postel.deliveries d
    WHERE d.message_id = ${messageId} ORDER BY d.created_at, d.id`;
  return rows.map(toDelivery);
}
