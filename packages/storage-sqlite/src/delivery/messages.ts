import type { DeliveryRecord, MessageRecord } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { toDelivery, toMessage } from "../internal/rows.js";

/** The delivery part's reads of one message: the message, and its deliveries. */
export function messageReads(db: Db) {
  return {
    async getMessage(id: string): Promise<MessageRecord | null> {
      const [row] = await db.read({ sql: "SELECT * FROM postel_messages WHERE id = :id", args: { id } });
      return row ? toMessage(row) : null;
    },

    async listDeliveries(messageId: string): Promise<DeliveryRecord[]> {
      const rows = await db.read({
        sql: "SELECT * FROM postel_deliveries WHERE message_id = :messageId ORDER BY created_at, id",
        args: { messageId },
      });
      return rows.map(toDelivery);
    },
  };
}
