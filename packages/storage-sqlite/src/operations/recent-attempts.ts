import { type AttemptRecord, idFloor, type RecentAttemptsQuery } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { toAttempt } from "../internal/rows.js";

/**
 * Every attempt is a row of postel_attempts, which has no index on `started_at` (none is added: it
 * would be written on every attempt). Attempt ids are made after the attempt started, so
 * `id >= idFloor(since)` is a primary-key range over the attempts recorded since about `since`.
 */
export async function recentAttempts(db: Db, query: RecentAttemptsQuery): Promise<AttemptRecord[]> {
  const rows = await db.read({
    sql: `SELECT * FROM postel_attempts WHERE id >= :floor AND started_at >= :since
      ORDER BY started_at, id LIMIT :limit`,
    args: { floor: idFloor("att", query.since), since: query.since, limit: Math.max(0, query.limit) },
  });
  return rows.map(toAttempt);
}
