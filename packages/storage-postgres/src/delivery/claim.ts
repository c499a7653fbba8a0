import type { ClaimedDelivery, DueClaim } from "@postel/core/storage";
import type { PendingQuery, Sql } from "postgres";
import { type ClaimFloor, type FloorKey, INDEX_START } from "../internal/claim-floor.js";
import { pipelinedTransaction } from "../internal/pipelined-transaction.js";
import { LEASE_ONLY, leaseToken, toClaimedDelivery } from "../internal/lease-tokens.js";
import { DELIVERY_COLUMNS, PREFIXED_MESSAGE_COLUMNS, type RawRow, asJson } from "../internal/rows.js";

/**
 * One statement: pick due pending deliveries through the partial index `deliveries_due_idx`, skip rows
 * other workers are locking, lease them (fresh token, owner, `next_attempt_at = until`) and return
 * them joined with their messages, earliest due first, from this instance's {@link ClaimFloor} on. It
 * commits without waiting for the WAL flush (see {@link LEASE_ONLY}). Run in a pipelined transaction:
 * never a sequential scan, even under a generic plan made while the deliveries were few.
 */
export async function claimDue(sql: Sql, lease: DueClaim, floor: ClaimFloor): Promise<ClaimedDelivery[]> {
  const [rows = []] = await pipelinedTransaction(sql, (tx) => [
    claimDueStatement(tx, lease, floor.from(lease.now)),
  ]);
  floor.after(
    lease.now,
    rows.map((row) => ({ at: Number(row["due_at"]), id: row["id"] as string })),
    lease.limit,
  );
  return rows.map((row) => toClaimedDelivery(row));
}

/** The claim statement itself, scanning from `from` (tests EXPLAIN it to pin the partial index). */
export function claimDueStatement(
  sql: Sql,
  lease: DueClaim,
  from: FloorKey = INDEX_START,
): PendingQuery<RawRow[]> {
  const skip = lease.skipEndpoints ?? [];
  return sql<RawRow[]>`
    WITH due AS (
      SELECT id, next_attempt_at AS due_at FROM postel.deliveries
      WHERE status = 'pending' AND next_attempt_at <= ${lease.now}::bigint
        AND (next_attempt_at, id) >= (${from.at}::bigint, ${from.id}::text) AND ${sql.unsafe(LEASE_ONLY)}
        ${skip.length > 0 ? sql`AND endpoint_id <> ALL(${skip as string[]}::text[])` : sql``}
      ORDER BY next_attempt_at, id
      LIMIT ${lease.limit}
      FOR UPDATE SKIP LOCKED
    ), d AS (
      UPDATE postel.deliveries d SET
        lease_token = ${sql.unsafe(leaseToken("d.id"))},
        lease_owner = ${lease.owner},
        next_attempt_at = ${lease.until}::bigint,
        updated_at = ${lease.now}::bigint
      -- The keys as arrays too: the planner then looks them up in the primary keys. Joined with the
      -- CTEs alone, it could plan hash joins over sequential scans of whole tables (per claim).
      FROM due WHERE d.id = due.id AND d.id = ANY(ARRAY(SELECT id FROM due))
      RETURNING d.*, due.due_at
    )
    SELECT ${sql.unsafe(DELIVERY_COLUMNS)}, ${sql.unsafe(PREFIXED_MESSAGE_COLUMNS)}, d.due_at
    FROM d JOIN postel.messages m ON m.id = d.message_id
    WHERE m.id = ANY(ARRAY(SELECT message_id FROM d))
    ORDER BY d.due_at, d.id`;
}

/** Extends the leases still held to `until`; returns the delivery ids whose lease was lost. */
export async function renewLeases(
  sql: Sql,
  leases: { deliveryId: string; leaseToken: string }[],
  until: number,
): Promise<string[]> {
  if (leases.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${asJson(leases)}::text::json) AS i("deliveryId" text, "leaseToken" text)
    ), renewed AS (
      UPDATE postel.deliveries d SET next_attempt_at = ${until}::bigint
      FROM input i WHERE d.id = i."deliveryId" AND d.lease_token = i."leaseToken"
        -- The keys as an array too: an index condition whatever the statistics (a hash join over a
        -- scan of every delivery showed up in plans.test under load, as in record-outcomes).
        AND d.id = ANY(ARRAY(SELECT "deliveryId" FROM input))
      RETURNING d.id
    )
    SELECT i."deliveryId" AS id FROM input i WHERE i."deliveryId" NOT IN (SELECT id FROM renewed)`;
  return rows.map((row) => row.id);
}

/** Moves an endpoint's `held` deliveries back to `pending`, due `now`. */
export async function releaseHeld(sql: Sql, endpointId: string, now: number): Promise<number> {
  const result = await sql`
    UPDATE postel.deliveries SET status = 'pending', next_attempt_at = ${now}::bigint, updated_at = ${now}::bigint
    WHERE endpoint_id = ${endpointId} AND status = 'held'`;
  return result.count;
}
