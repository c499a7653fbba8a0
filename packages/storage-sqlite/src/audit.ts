import {
  type AttemptRecord,
  type DeadLetter,
  type DeadLetterQuery,
  type DeliveryRecord,
  type DeliveryStatus,
  idFloor,
  type MessageQuery,
  type MessageRecord,
  type RecentAttemptsQuery,
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

    /** Newest first by id (core's ids sort by creation time), past the `after` id. */
    async listMessages(query: MessageQuery): Promise<MessageRecord[]> {
      const rows = await db.read({
        sql: `SELECT * FROM postel_messages
          WHERE (:status IS NULL OR status = :status)
            AND (:type IS NULL OR type = :type)
            AND (:tenantId IS NULL OR tenant_id = :tenantId)
            AND (:since IS NULL OR created_at >= :since)
            AND (:until IS NULL OR created_at < :until)
            AND (:after IS NULL OR id < :after)
            ${query.from !== undefined ? "AND id >= :from" : ""}
          ORDER BY id DESC LIMIT :limit`,
        args: {
          status: query.status ?? null,
          type: query.type ?? null,
          tenantId: query.tenantId ?? null,
          since: query.since ?? null,
          until: query.until ?? null,
          after: query.after ?? null,
          ...(query.from !== undefined ? { from: query.from } : {}),
          limit: Math.max(0, query.limit),
        },
      });
      return rows.map((row) => toMessage(row));
    },

    /** The lowest of the `size` newest message ids below `after`, or null when fewer are left (a walk of the key). */
    async messageWindow(after: string | undefined, size: number): Promise<string | null> {
      const [row] = await db.read({
        sql: `SELECT min(id) AS low, count(*) AS n FROM (
          SELECT id FROM postel_messages ${after !== undefined ? "WHERE id < :after" : ""}
          ORDER BY id DESC LIMIT :size)`,
        args: { ...(after !== undefined ? { after } : {}), size },
      });
      return row !== undefined && Number(row["n"]) >= size ? String(row["low"]) : null;
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

    /**
     * Read from the `postel_dead_letter` view, newest delivery id first, past the `after` id: its
     * partial index postel_deliveries_dead_letter is walked backwards, a page reads about `limit` rows.
     */
    async listDeadLetters(query: DeadLetterQuery): Promise<DeadLetter[]> {
      const rows = await db.read({
        sql: `SELECT * FROM postel_dead_letter
          WHERE (:endpointId IS NULL OR endpoint_id = :endpointId)
            AND (:since IS NULL OR dead_lettered_at >= :since)
            AND (:until IS NULL OR dead_lettered_at < :until)
            AND (:after IS NULL OR delivery_id < :after)
          ORDER BY delivery_id DESC LIMIT :limit`,
        args: {
          endpointId: query.endpointId ?? null,
          since: query.since ?? null,
          until: query.until ?? null,
          after: query.after ?? null,
          limit: Math.max(0, query.limit),
        },
      });
      return rows.map((row) => ({
        deliveryId: str(row, "delivery_id"),
        messageId: str(row, "message_id"),
        endpointId: str(row, "endpoint_id"),
        webhookId: str(row, "webhook_id"),
        type: str(row, "type"),
        tenantId: strOrNull(row, "tenant_id"),
        attemptsMade: int(row, "attempts_made"),
        lastError: strOrNull(row, "last_error"),
        createdAt: int(row, "message_created_at"),
        deadLetteredAt: int(row, "dead_lettered_at"),
      }));
    },

    /**
     * Every attempt is a row of postel_attempts, which has no index on `started_at` (none is added: it
     * would be written on every attempt). Attempt ids are made after the attempt started, so
     * `id >= idFloor(since)` is a primary-key range over the attempts recorded since about `since`.
     */
    async recentAttempts(query: RecentAttemptsQuery): Promise<AttemptRecord[]> {
      const rows = await db.read({
        sql: `SELECT * FROM postel_attempts WHERE id >= :floor AND started_at >= :since
          ORDER BY started_at, id LIMIT :limit`,
        args: { floor: idFloor("att", query.since), since: query.since, limit: Math.max(0, query.limit) },
      });
      return rows.map(toAttempt);
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
