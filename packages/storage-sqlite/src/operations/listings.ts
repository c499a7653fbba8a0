import type {
  AttemptRecord,
  DeadLetter,
  DeadLetterQuery,
  MessageQuery,
  MessageRecord,
} from "@postel/core/storage";
import type { Db, Statement } from "../internal/database.js";
import { newestFirst } from "../internal/sql-fragments.js";
import { int, str, strOrNull, toAttempt, toMessage } from "../internal/rows.js";

/** The WHERE of postel_messages_dead_or_expired, repeated verbatim so that SQLite knows it may use it. */
const DEAD_OR_EXPIRED = "status IN ('dead-lettered', 'expired')";

/**
 * The statement of `listMessages` (exported for the plan tests). Only the filters given reach the SQL:
 * SQLite plans a statement once for any argument, so `(:after IS NULL OR id < :after)` could use no
 * index and every page walked the primary key back from the newest message (a status no message has,
 * the whole history). Now `after` and `from` bound a range of the primary key, and a dead-lettered or
 * expired status is a range of the partial index postel_messages_dead_or_expired, both walked newest
 * first. Other statuses and the time range are kept off the indexes (unary +): sorting a million
 * dispatched messages, or a month of them, for one page costs far more than walking the key.
 */
export function listMessagesStatement(query: MessageQuery): Statement {
  const rare = query.status === "dead-lettered" || query.status === "expired";
  const conditions = {
    status: rare ? `${DEAD_OR_EXPIRED} AND status = :status` : "+status = :status",
    type: "type = :type",
    tenantId: "tenant_id = :tenantId",
    since: "+created_at >= :since",
    until: "+created_at < :until",
    after: "id < :after",
    from: "id >= :from",
  };
  return newestFirst("postel_messages", conditions, query);
}

/** The operations listings: messages, attempts, dead letters. Never take the write lock. */
export function listings(db: Db) {
  return {
    /** Newest first by id (core's ids sort by creation time), past the `after` id. */
    async listMessages(query: MessageQuery): Promise<MessageRecord[]> {
      return (await db.read(listMessagesStatement(query))).map(toMessage);
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
     * Newest delivery id first, past the `after` id: the status's partial index
     * (postel_deliveries_dead_letter or postel_deliveries_failed) is walked backwards, so a page reads
     * about `limit` rows; the status is a literal so the planner can pick that index.
     */
    async listDeadLetters(query: DeadLetterQuery): Promise<DeadLetter[]> {
      const status = query.status === "failed" ? "failed" : "dead-lettered";
      const rows = await db.read({
        sql: `SELECT d.status, d.id AS delivery_id, d.message_id, d.endpoint_id, d.webhook_id, m.type,
            m.tenant_id, d.attempts_made, d.last_error, m.created_at AS message_created_at,
            d.updated_at AS dead_lettered_at
          FROM postel_deliveries d JOIN postel_messages m ON m.id = d.message_id
          WHERE d.status = '${status}'
            AND (:endpointId IS NULL OR d.endpoint_id = :endpointId)
            AND (:since IS NULL OR d.updated_at >= :since)
            AND (:until IS NULL OR d.updated_at < :until)
            AND (:after IS NULL OR d.id < :after)
          ORDER BY d.id DESC LIMIT :limit`,
        args: {
          endpointId: query.endpointId ?? null,
          since: query.since ?? null,
          until: query.until ?? null,
          after: query.after ?? null,
          limit: Math.max(0, query.limit),
        },
      });
      return rows.map((row) => ({
        status,
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
  };
}
