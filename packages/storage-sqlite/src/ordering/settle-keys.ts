import type { InArgs } from "@libsql/client";
import { OPEN_DELIVERY_STATUSES, sqlStatusList } from "@postel/core/storage";
import type { Statement } from "../internal/database.js";
import { leaseTokenSql } from "../internal/lease-tokens.js";

// `ORDERING_RULES` in SQL. Every verb that can end or add a key's head runs `settleKeys` in its own
// write transaction (SQLite's single writer), so the check and the promotion never interleave with
// another process's.

/**
 * The condition of `postel_deliveries_key_open` (migration 0010) on `alias`: SQLite uses a partial index
 * only for a query whose WHERE contains its condition, and `status = 'waiting'` does not imply the IN.
 */
export function openKeyed(alias: string): string {
  return `${alias}.ordering_key IS NOT NULL AND ${alias}.status IN ${sqlStatusList(OPEN_DELIVERY_STATUSES)}`;
}

/** The rows of the key (`k.endpoint_id`, `k.ordering_key`) in `alias`, on the partial index. */
function ofKey(alias: string): string {
  return `${alias}.endpoint_id = k.endpoint_id AND ${alias}.ordering_key = k.ordering_key AND ${openKeyed(alias)}`;
}

/**
 * The earliest waiting delivery (by message id, then id) of each key that has no head (`pending` or
 * `held`) and is not held, among `keys` (a subquery of `endpoint_id, ordering_key` rows).
 */
function nextOfKeys(keys: string): string {
  return `SELECT (SELECT w.id FROM postel_deliveries w WHERE ${ofKey("w")} AND w.status = 'waiting'
      ORDER BY w.message_id, w.id LIMIT 1)
    FROM (${keys}) k
    WHERE NOT EXISTS (SELECT 1 FROM postel_deliveries h WHERE ${ofKey("h")} AND h.status IN ('pending', 'held'))
      AND NOT EXISTS (SELECT 1 FROM postel_held_keys hk
        WHERE hk.endpoint_id = k.endpoint_id AND hk.ordering_key = k.ordering_key)`;
}

/**
 * `ORDERING_RULES.nextOnEnd` for every (endpoint, key) `keys` selects (a subquery of `endpoint_id,
 * ordering_key` rows; `args` binds it and `:now`): when the key has no head and is not held, its earliest
 * waiting delivery becomes `pending`, due now. The IN list is computed before any row changes, so a key
 * listed twice still gets one head.
 */
export function settleKeys(keys: string, args: InArgs): Statement {
  return {
    sql: `UPDATE postel_deliveries SET status = 'pending', next_attempt_at = :now, updated_at = :now
      WHERE id IN (${nextOfKeys(keys)})`,
    args,
  };
}

/**
 * `ORDERING_RULES.leaseNext`, right after `settleKeys` in the same write transaction: lease to `:owner`
 * until `:until` (tokens under `:nonce`, read back with `selectLeased`) the head of each key `keys`
 * selects that is pending, unleased and due — the one `settleKeys` just let go, as the key's ended head
 * was its only one.
 */
export function leaseHeadsOfKeys(keys: string, args: InArgs): Statement {
  return {
    sql: `UPDATE postel_deliveries SET lease_token = ${leaseTokenSql("0", "id")},
        lease_owner = :owner, next_attempt_at = :until, updated_at = :now
      WHERE id IN (SELECT h.id FROM (${keys}) k JOIN postel_deliveries h ON ${ofKey("h")}
        WHERE h.status = 'pending' AND h.lease_token IS NULL AND h.next_attempt_at <= :now)`,
    args,
  };
}

/** The `(endpoint_id, ordering_key)` pairs bound to `:param` as a JSON array of `[endpointId, key]`. */
export function keysOf(param: string): string {
  return `SELECT DISTINCT value->>0 AS endpoint_id, value->>1 AS ordering_key FROM json_each(:${param})`;
}

/** The keys of the deliveries whose ids `:param` binds (a JSON array), unordered ones left out. */
export function keysOfDeliveries(param: string): string {
  return `SELECT DISTINCT endpoint_id, ordering_key FROM postel_deliveries
    WHERE id IN (SELECT value FROM json_each(:${param})) AND ordering_key IS NOT NULL`;
}
