import type { ClaimedDelivery, LeaseRequest, LimitedClaim } from "@postel/core/storage";
import type { Sql } from "postgres";
import { begin } from "../internal/begin.js";
import { planSettings } from "../internal/pipelined-transaction.js";
import { asJson, DELIVERY_COLUMNS, PREFIXED_MESSAGE_COLUMNS, type RawRow } from "../internal/rows.js";
import { leaseToken, toClaimedDelivery } from "../internal/lease-tokens.js";

/**
 * Leases due deliveries of endpoints with limits, honouring each limit across every worker on the
 * database. One transaction: a transaction-scoped advisory lock per endpoint (taken in id order, so two
 * workers never wait on each other in a cycle) serialises the endpoint's claims; then one statement
 * counts its live leases (through `deliveries_endpoint_due_idx`: pending, leased until after now),
 * refills its token bucket, leases the earliest due deliveries the limits allow and spends their
 * tokens.
 */
export async function claimLimited(
  sql: Sql,
  claims: LimitedClaim[],
  lease: Omit<LeaseRequest, "limit">,
): Promise<ClaimedDelivery[]> {
  const wanted = claims.filter((claim) => claim.want > 0);
  if (wanted.length === 0) return [];
  const ids = wanted.map((claim) => claim.endpointId);
  const rows = await begin(sql, async (tx) => {
    // The plan settings of the worker's other transactions (see pipelinedTransaction).
    await planSettings(tx);
    await tx`
      SELECT pg_advisory_xact_lock(hashtextextended('postel.endpoint-limits:' || id, 0))
      FROM unnest(${ids}::text[]) AS id ORDER BY id`;
    return tx<RawRow[]>`
      WITH input AS (
        SELECT * FROM json_to_recordset(${asJson(wanted)}::text::json)
          AS i("endpointId" text, want int, "maxInFlight" int, "rateLimit" float8)
      ), bucket AS (
        SELECT i.*, CASE WHEN i."rateLimit" IS NOT NULL THEN least(greatest(1.0, i."rateLimit"), coalesce(
          b.tokens + greatest(0, ${lease.now}::bigint - b.refilled_at) * i."rateLimit" / 1000.0,
          greatest(1.0, i."rateLimit"))) END AS tokens
        FROM input i LEFT JOIN postel.endpoint_rate_buckets b ON b.endpoint_id = i."endpointId"
      ), granted AS (
        SELECT b."endpointId" AS endpoint_id, b.tokens, greatest(0, least(
          b.want,
          coalesce(b."maxInFlight" - (
            SELECT count(*)::int FROM postel.deliveries d
            WHERE d.endpoint_id = b."endpointId" AND d.status = 'pending'
              AND d.next_attempt_at > ${lease.now}::bigint AND d.lease_token IS NOT NULL), b.want),
          coalesce(floor(b.tokens)::int, b.want))) AS n
        FROM bucket b
      ), due AS (
        SELECT x.id, x.next_attempt_at AS due_at, g.endpoint_id FROM granted g
        CROSS JOIN LATERAL (
          SELECT id, next_attempt_at FROM postel.deliveries d
          WHERE d.endpoint_id = g.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= ${lease.now}::bigint
          ORDER BY d.next_attempt_at, d.id
          LIMIT g.n
          FOR UPDATE SKIP LOCKED) x
      ), d AS (
        UPDATE postel.deliveries d SET
          lease_token = ${tx.unsafe(leaseToken("d.id"))},
          lease_owner = ${lease.owner},
          next_attempt_at = ${lease.until}::bigint,
          updated_at = ${lease.now}::bigint
        -- The keys as arrays too, so the planner looks them up by primary key (see claimDueStatement).
        FROM due WHERE d.id = due.id AND d.id = ANY(ARRAY(SELECT id FROM due))
        RETURNING d.*, due.due_at
      ), spent AS (
        INSERT INTO postel.endpoint_rate_buckets AS b (endpoint_id, tokens, refilled_at)
        SELECT g.endpoint_id, g.tokens - (SELECT count(*) FROM due WHERE due.endpoint_id = g.endpoint_id),
          ${lease.now}::bigint
        FROM granted g WHERE g.tokens IS NOT NULL
        ON CONFLICT (endpoint_id) DO UPDATE SET tokens = excluded.tokens, refilled_at = excluded.refilled_at
      )
      SELECT ${sql.unsafe(DELIVERY_COLUMNS)}, ${sql.unsafe(PREFIXED_MESSAGE_COLUMNS)}, d.due_at
      FROM d JOIN postel.messages m ON m.id = d.message_id
      WHERE m.id = ANY(ARRAY(SELECT message_id FROM d))
      ORDER BY d.due_at, d.id`;
  });
  return rows.map((row) => toClaimedDelivery(row));
}
