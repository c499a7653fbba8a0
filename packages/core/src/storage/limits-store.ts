import type { LeaseRequest } from "./delivery-storage.js";
import type { ClaimedDelivery } from "./records.js";

/**
 * Tokens in an endpoint's rate-limit bucket at `now`: `tokens` at `at`, refilled at `rateLimit` per second
 * up to `max(1, rateLimit)`; a bucket never used (`tokens` null) is full. For `Storage` implementations.
 */
export function bucketTokens(tokens: number | null, at: number, rateLimit: number, now: number): number {
  const burst = Math.max(1, rateLimit);
  if (tokens === null) return burst;
  return Math.min(burst, tokens + (Math.max(0, now - at) * rateLimit) / 1000);
}

/** One endpoint's part of a `claimLimited` call. */
export interface LimitedClaim {
  endpointId: string;
  /** Deliveries of it this worker has room for. */
  want: number;
  /** At most this many of its deliveries leased at once, by every worker together; null: no limit. */
  maxInFlight: number | null;
  /**
   * At most this many deliveries claimed per second, by every worker together: a token bucket kept in
   * storage, refilled at this rate up to `max(1, rateLimit)` tokens; null: no limit.
   */
  rateLimit: number | null;
}

/**
 * Per-endpoint limits (an optional capability, `Storage.limits`): `maxInFlight` and `rateLimit` held
 * across every worker that shares the storage. Creating or updating an endpoint with a limit needs it.
 */
export interface LimitsStore {
  /**
   * Lease due deliveries of endpoints that have limits, honouring each limit across every worker that
   * shares the storage. Claims of one endpoint are serialised (a lock, or the single writer), and per
   * claim at most `want` are leased, at most `maxInFlight` minus its deliveries already leased (a lease
   * counts until its outcome is recorded or it expires), and at most the whole tokens in its bucket
   * (a new bucket is full; each delivery claimed spends one token). Earliest due first; leased like
   * `claimDue`. Workers never `claimDue` these endpoints' deliveries.
   */
  claimLimited(claims: LimitedClaim[], lease: Omit<LeaseRequest, "limit">): Promise<ClaimedDelivery[]>;
}
