import type { ClaimedDelivery, DueClaim } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import {
  leaseArgs,
  leaseTokenSql,
  newLeaseNonce,
  renewHeld,
  selectLeased,
  toClaimed,
} from "../internal/lease-tokens.js";
import { heldFence, jsonArg, jsonRows } from "../internal/sql-fragments.js";

const LEASE_KEYS = ["deliveryId", "leaseToken"] as const;

/** The claim verbs: claim due work, renew leases, release held work. */
export function claims(db: Db) {
  return {
    async claimDue(lease: DueClaim): Promise<ClaimedDelivery[]> {
      const nonce = newLeaseNonce();
      const skip = lease.skipEndpoints ?? [];
      // BEGIN IMMEDIATE takes SQLite's single write lock before the SELECT runs, so no other process
      // can claim between choosing the rows and leasing them; the partial index keeps it flat.
      const [, leased] = await db.write([
        {
          sql: `UPDATE postel_deliveries
            SET lease_token = ${leaseTokenSql("next_attempt_at", "id")}, lease_owner = :owner, next_attempt_at = :until, updated_at = :now
            WHERE id IN (
              SELECT id FROM postel_deliveries
              WHERE status = 'pending' AND next_attempt_at <= :now${
                skip.length > 0 ? " AND endpoint_id NOT IN (SELECT value FROM json_each(:skip))" : ""
              }
              ORDER BY next_attempt_at, id LIMIT :limit)`,
          args: { nonce, ...leaseArgs(lease), ...(skip.length > 0 ? { skip: JSON.stringify(skip) } : {}) },
        },
        selectLeased(nonce),
      ]);
      return (leased?.rows ?? []).map(toClaimed);
    },

    async renewLeases(
      leases: { deliveryId: string; leaseToken: string }[],
      until: number,
    ): Promise<string[]> {
      if (leases.length === 0) return [];
      const renewal = {
        sql: `WITH l AS (${jsonRows("leases", LEASE_KEYS)})
          UPDATE postel_deliveries SET next_attempt_at = :until FROM l
          WHERE ${heldFence("postel_deliveries", "l.deliveryId", "l.leaseToken")}
          RETURNING postel_deliveries.id`,
        args: { leases: jsonArg(leases, LEASE_KEYS), until },
      };
      return renewHeld(
        db,
        renewal,
        leases.map((l) => l.deliveryId),
      );
    },

    async releaseHeld(endpointId: string, now: number): Promise<number> {
      const [released] = await db.write([
        {
          sql: `UPDATE postel_deliveries SET status = 'pending', next_attempt_at = :now, updated_at = :now
            WHERE endpoint_id = :endpointId AND status = 'held'`,
          args: { endpointId, now },
        },
      ]);
      return released?.rowsAffected ?? 0;
    },
  };
}
