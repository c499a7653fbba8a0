import type { ClaimedDelivery, LeaseRequest, LimitedClaim } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { leaseTokenSql, newLeaseNonce, selectLeased, toClaimed } from "../internal/lease-tokens.js";
import { jsonArg, jsonRows } from "../internal/sql-fragments.js";

const LIMITED_KEYS = ["endpointId", "want", "maxInFlight", "rateLimit"] as const;

// The endpoint's bucket refilled to now (null without a rate limit): read by both statements of a
// limited claim, which see the same row and the same :now.
const REFILLED = `CASE WHEN c.rateLimit IS NOT NULL THEN min(max(1.0, c.rateLimit), coalesce(
  b.tokens + max(0, :now - b.refilled_at) * c.rateLimit / 1000.0, max(1.0, c.rateLimit))) END`;

/** `claimLimited`: due deliveries of each endpoint, as many as its limits allow. */
export async function claimLimited(
  db: Db,
  claims: LimitedClaim[],
  lease: Omit<LeaseRequest, "limit">,
): Promise<ClaimedDelivery[]> {
  const wanted = claims.filter((claim) => claim.want > 0);
  if (wanted.length === 0) return [];
  const nonce = newLeaseNonce();
  const args = {
    claims: jsonArg(wanted, LIMITED_KEYS),
    nonce,
    owner: lease.owner,
    now: lease.now,
    until: lease.until,
  };
  const input = `c AS (${jsonRows("claims", LIMITED_KEYS)})`;
  // One write transaction (the single writer serialises every worker's claims): lease what each
  // endpoint's limits allow (its live leases counted through the endpoint index), then spend the
  // tokens of what was leased, then read it back.
  const [, , leased] = await db.write([
    {
      sql: `WITH ${input}, granted AS (
          SELECT c.endpointId, max(0, min(c.want,
            coalesce(c.maxInFlight - (SELECT count(*) FROM postel_deliveries d
              WHERE d.endpoint_id = c.endpointId AND d.status = 'pending'
                AND d.next_attempt_at > :now AND d.lease_token IS NOT NULL), c.want),
            coalesce(CAST(${REFILLED} AS INTEGER), c.want))) AS n
          FROM c LEFT JOIN postel_endpoint_rate_buckets b ON b.endpoint_id = c.endpointId
        ), ranked AS (
          SELECT d.id, g.n, row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS rank
          FROM granted g JOIN postel_deliveries d
            ON d.endpoint_id = g.endpointId AND d.status = 'pending' AND d.next_attempt_at <= :now
        )
        UPDATE postel_deliveries
        SET lease_token = ${leaseTokenSql("next_attempt_at", "id")}, lease_owner = :owner,
          next_attempt_at = :until, updated_at = :now
        WHERE id IN (SELECT id FROM ranked WHERE rank <= n)`,
      args,
    },
    {
      sql: `WITH ${input}
        INSERT INTO postel_endpoint_rate_buckets (endpoint_id, tokens, refilled_at)
        SELECT c.endpointId, ${REFILLED} - (SELECT count(*) FROM postel_deliveries d
            WHERE d.endpoint_id = c.endpointId AND d.lease_token >= :low AND d.lease_token < :high), :now
        FROM c LEFT JOIN postel_endpoint_rate_buckets b ON b.endpoint_id = c.endpointId
        WHERE c.rateLimit IS NOT NULL
        ON CONFLICT (endpoint_id) DO UPDATE SET tokens = excluded.tokens, refilled_at = excluded.refilled_at`,
      args: { claims: args.claims, now: lease.now, low: `${nonce}:`, high: `${nonce};` },
    },
    selectLeased(nonce),
  ]);
  return (leased?.rows ?? []).map(toClaimed);
}
