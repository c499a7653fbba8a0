import {
  FINISHED_MESSAGE_STATUSES,
  type HealthPruneRequest,
  type PruneBatch,
  type PruneRequest,
  sqlStatusList,
} from "@postel/core/storage";
import type { Db, Statement } from "../internal/database.js";
import { OPEN_STATUSES } from "../internal/sql-fragments.js";

// The ids a batch examines: the next `limit` of the primary key from `after`, below `below`.
const EXAMINED = `SELECT id FROM postel_messages WHERE id > :after AND id < :below ORDER BY id LIMIT :limit`;

// Of those, the finished ones to delete. The unary + keeps SQLite on the primary key (see
// finaliseMessages); every delivery must be terminal, so nothing live is ever deleted, and none may
// hold its ordering key (ORDERING_RULES.retention: the operator still replays or skips it).
const DOOMED = `SELECT m.id FROM postel_messages m
  WHERE m.id IN (${EXAMINED})
    AND +m.status IN ${sqlStatusList(FINISHED_MESSAGE_STATUSES)} AND m.finished_at < :finishedBefore
    AND NOT EXISTS (SELECT 1 FROM postel_deliveries d WHERE d.message_id = m.id AND (d.status IN ${OPEN_STATUSES}
      OR EXISTS (SELECT 1 FROM postel_held_keys hk WHERE hk.delivery_id = d.id)))`;

/** The statements of one batch: what it examined, then its deletes (tests EXPLAIN them). */
export function pruneStatements(request: PruneRequest): Statement[] {
  const args = {
    after: request.after,
    below: request.below,
    limit: request.limit,
    finishedBefore: request.finishedBefore,
  };
  return [
    { sql: `SELECT count(*) AS n, max(id) AS last FROM (${EXAMINED})`, args },
    { sql: `DELETE FROM postel_attempts WHERE message_id IN (${DOOMED})`, args },
    { sql: `DELETE FROM postel_deliveries WHERE message_id IN (${DOOMED})`, args },
    { sql: `DELETE FROM postel_messages WHERE id IN (${DOOMED})`, args },
  ];
}

/**
 * One batch of old endpoint health buckets (tests EXPLAIN it). CROSS JOIN keeps the endpoints the
 * outer loop, each one's old buckets a range of the primary key `(endpoint_id, bucket_start)`: a
 * scan of the whole health index would walk every kept bucket again in each batch.
 */
export function pruneHealthStatement(request: HealthPruneRequest): Statement {
  return {
    sql: `DELETE FROM postel_endpoint_health WHERE rowid IN (
      SELECT h.rowid FROM postel_endpoints e
      CROSS JOIN postel_endpoint_health h ON h.endpoint_id = e.id AND h.bucket_start < :startedBefore
      LIMIT :limit)`,
    args: { startedBefore: request.startedBefore, limit: request.limit },
  };
}

/** Retention: old finished history deleted a batch (one write transaction) at a time. */
export function retentionStore(db: Db) {
  return {
    /**
     * One write transaction under SQLite's single writer, so a batch never interleaves with a claim
     * and a message goes with all its rows or not at all. Attempts go first, then deliveries, then
     * messages, so no row is left pointing at a deleted one; the foreign keys are not checked on the
     * way (see `WriteOptions`).
     */
    async pruneFinished(request: PruneRequest): Promise<PruneBatch> {
      const [examined, attempts, deliveries, messages] = await db.write(pruneStatements(request), {
        withoutForeignKeyChecks: true,
      });
      const row = examined?.rows[0];
      const count = Number(row?.["n"] ?? 0);
      return {
        messages: messages?.rowsAffected ?? 0,
        deliveries: deliveries?.rowsAffected ?? 0,
        attempts: attempts?.rowsAffected ?? 0,
        next: count === request.limit && count > 0 ? String(row?.["last"]) : null,
      };
    },

    /**
     * Old endpoint health buckets, one write transaction: for each endpoint (deleted ones are soft
     * deleted, so every bucket's endpoint is there) its buckets before the cutoff.
     */
    async pruneHealth(request: HealthPruneRequest): Promise<number> {
      const [gone] = await db.write([pruneHealthStatement(request)]);
      return gone?.rowsAffected ?? 0;
    },
  };
}
