import type { HealthBucket, HealthBucketQuery } from "@postel/core/storage";
import type { Sql } from "postgres";
import { epochMs, type RawRow } from "../internal/rows.js";

/**
 * The statement of `healthBuckets` (exported for the plan tests). One endpoint: a range of
 * endpoint_health's primary key. Every endpoint: that range per endpoint row (deleted ones too, whose
 * buckets retention has not pruned yet), summed per start; never a scan of the buckets of the past.
 */
export function healthBucketsStatement(sql: Sql, query: HealthBucketQuery) {
  const since = epochMs(query.since);
  if (query.endpointId !== undefined) {
    return sql<RawRow[]>`
      SELECT bucket_start AS start, attempts, failures FROM postel.endpoint_health
      WHERE endpoint_id = ${query.endpointId} AND bucket_start >= ${since}::bigint AND attempts > 0
      ORDER BY bucket_start`;
  }
  return sql<RawRow[]>`
    SELECT b.bucket_start AS start, sum(b.attempts) AS attempts, sum(b.failures) AS failures
    FROM postel.endpoints e
    CROSS JOIN LATERAL (
      SELECT h.bucket_start, h.attempts, h.failures FROM postel.endpoint_health h
      WHERE h.endpoint_id = e.id AND h.bucket_start >= ${since}::bigint
      -- OFFSET 0 keeps this a probe of the key per endpoint: flattened, it becomes a scan of every bucket.
      OFFSET 0
    ) b
    GROUP BY b.bucket_start
    HAVING sum(b.attempts) > 0
    ORDER BY b.bucket_start`;
}

/** Health buckets from `since`, oldest first (see `healthBucketsStatement`). */
export async function healthBuckets(sql: Sql, query: HealthBucketQuery): Promise<HealthBucket[]> {
  return (await healthBucketsStatement(sql, query)).map((row) => ({
    start: Number(row["start"]),
    attempts: Number(row["attempts"]),
    failures: Number(row["failures"]),
  }));
}
