import type {
  AttemptRecord,
  DeliveryRecord,
  DeliveryStatus,
  MessageQuery,
  MessageRecord,
  PageRequest,
} from "@postel/core";
import type { Db } from "./internal/database.js";
import { int, str, strOrNull, toAttempt, toDelivery, toMessage } from "./internal/rows.js";

/** The audit reads: messages, deliveries, attempts, dead letters, counts. Never take the write lock. */
export function auditStore(db: Db) {
  return {
    async getMessage(id: string): Promise<MessageRecord | null> {
      const [row] = await db.read({ sql: "SELECT * FROM postel_messages WHERE id = :id", args: { id } });
      return row ? toMessage(row) : null;
    },

    /** Newest first by id (core's ids sort by creation time); `before` is exclusive. */
    async listMessages(query: MessageQuery): Promise<MessageRecord[]> {
      const rows = await db.read({
        sql: `SELECT * FROM postel_messages
          WHERE (:status IS NULL OR status = :status)
            AND (:type IS NULL OR type = :type)
            AND (:tenantId IS NULL OR tenant_id = :tenantId)
            AND (:since IS NULL OR created_at >= :since)
            AND (:until IS NULL OR created_at < :until)
            AND (:before IS NULL OR id < :before)
          ORDER BY id DESC LIMIT :limit`,
        args: {
          status: query.status ?? null,
          type: query.type ?? null,
          tenantId: query.tenantId ?? null,
          since: query.since ?? null,
          until: query.until ?? null,
          before: query.before ?? null,
          limit: Math.max(0, query.limit),
        },
      });
      return rows.map((row) => toMessage(row));
    },

    async listDeliveries(messageId: string): Promise<DeliveryRecord[]> {
      const rows = await db.read({
        sql: "SELECT * FROM postel_deliveries WHERE message_id = :messageId ORDER BY created_at, id",
        args: { messageId },
      });
      return rows.map(toDelivery);
    },

    async listAttempts(messageId: string): Promise<AttemptRecord[]> {
      // rowid last: attempts with equal keys keep the order they were recorded in.
      const rows = await db.read({
        sql: `SELECT * FROM postel_attempts WHERE message_id = :messageId
          ORDER BY started_at, attempt_number, rowid`,
        args: { messageId },
      });
      return rows.map(toAttempt);
    },

    /** Read from the `postel_dead_letter` view, newest delivery id first; `before` is exclusive. */
    async listDeadLetters(
      query: PageRequest & { endpointId?: string | undefined },
    ): Promise<DeliveryRecord[]> {
      const rows = await db.read({
        sql: `SELECT * FROM postel_dead_letter
          WHERE (:endpointId IS NULL OR endpoint_id = :endpointId) AND (:before IS NULL OR delivery_id < :before)
          ORDER BY delivery_id DESC LIMIT :limit`,
        args: {
          endpointId: query.endpointId ?? null,
          before: query.before ?? null,
          limit: Math.max(0, query.limit),
        },
      });
      // A dead-lettered delivery is terminal, so recordOutcomes has already cleared its lease.
      return rows.map((row) => ({
        id: str(row, "delivery_id"),
        messageId: str(row, "message_id"),
        endpointId: str(row, "endpoint_id"),
        webhookId: str(row, "webhook_id"),
        createdAt: int(row, "delivery_created_at"),
        status: "dead-lettered",
        retriesUsed: int(row, "retries_used"),
        attemptsMade: int(row, "attempts_made"),
        nextAttemptAt: int(row, "next_attempt_at"),
        leaseToken: null,
        leaseOwner: null,
        lastError: strOrNull(row, "last_error"),
        updatedAt: int(row, "dead_lettered_at"),
      }));
    },

    async countDeliveries(endpointId?: string): Promise<Partial<Record<DeliveryStatus, number>>> {
      const rows = await db.read({
        sql: `SELECT status, count(*) AS n FROM postel_deliveries
          WHERE (:endpointId IS NULL OR endpoint_id = :endpointId) GROUP BY status`,
        args: { endpointId: endpointId ?? null },
      });
      return Object.fromEntries(rows.map((row) => [str(row, "status"), int(row, "n")]));
    },
  };
}
