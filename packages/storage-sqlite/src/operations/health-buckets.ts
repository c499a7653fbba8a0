import type { HealthBucket, HealthBucketQuery } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { int } from "../internal/rows.js";

/** Per endpoint a range of the buckets' primary key; every endpoint's summed per start. */
export async function healthBuckets(
  db: Db,
  { since, endpointId }: HealthBucketQuery,
): Promise<HealthBucket[]> {
  const rows = await db.read({
    sql:
      endpointId === undefined
        ? `SELECT h.bucket_start AS start, sum(h.attempts) AS attempts, sum(h.failures) AS failures
            FROM postel_endpoints e CROSS JOIN postel_endpoint_health h
              ON h.endpoint_id = e.id AND h.bucket_start >= :since
            GROUP BY h.bucket_start HAVING sum(h.attempts) > 0 ORDER BY h.bucket_start`
        : `SELECT bucket_start AS start, attempts, failures FROM postel_endpoint_health
            WHERE endpoint_id = :id AND bucket_start >= :since AND attempts > 0 ORDER BY bucket_start`,
    args: endpointId === undefined ? { since } : { id: endpointId, since },
  });
  return rows.map((row) => ({
    start: int(row, "start"),
    attempts: int(row, "attempts"),
    failures: int(row, "failures"),
  }));
}
