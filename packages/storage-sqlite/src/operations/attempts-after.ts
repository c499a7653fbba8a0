import type { AttemptFeedQuery, AttemptRecord } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { toAttempt } from "../internal/rows.js";

/**
 * A range of the attempts' primary key from `after` (every attempt has its own row here), the
 * filters applied in the statement, so a page never stops on another endpoint's rows.
 */
export async function attemptsAfter(db: Db, query: AttemptFeedQuery): Promise<AttemptRecord[]> {
  const rows = await db.read({
    sql: `SELECT a.* FROM postel_attempts a
      WHERE a.id > :after
        AND (:endpointId IS NULL OR a.endpoint_id = :endpointId)
        AND (:outcome IS NULL OR a.outcome = :outcome)
        AND (:type IS NULL OR (SELECT m.type FROM postel_messages m WHERE m.id = a.message_id) = :type)
      ORDER BY a.id LIMIT :limit`,
    args: {
      after: query.after,
      endpointId: query.endpointId ?? null,
      outcome: query.outcome ?? null,
      type: query.type ?? null,
      limit: Math.max(0, query.limit),
    },
  });
  return rows.map(toAttempt);
}
