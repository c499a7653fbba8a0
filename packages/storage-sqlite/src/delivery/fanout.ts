import {
  type ClaimedDelivery,
  type ClaimedMessage,
  type FanoutClaim,
  type FanoutResult,
  fanoutMessageStatus,
} from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import {
  leaseArgs,
  leaseTokenSql,
  newLeaseNonce,
  renewHeld,
  selectLeased,
  toClaimed,
} from "../internal/lease-tokens.js";
import { CLAIMED_MESSAGE_JSON, compareIds, str, toClaimedMessage } from "../internal/rows.js";
import { jsonArg, jsonRows, unfannedFence } from "../internal/sql-fragments.js";

const FANNED_DELIVERY_KEYS = [
  "id",
  "messageId",
  "endpointId",
  "webhookId",
  "createdAt",
  "fenceId",
  "token",
  "leased",
] as const;
const FANNED_KEYS = ["id", "token", "status"] as const;
const FANOUT_LEASE_KEYS = ["messageId", "token"] as const;

/** The fan-out verbs: the fan-out lease over messages not yet fanned out, and its renewal (`direct`). */
export function fanout(db: Db) {
  return {
    async claimFanout(lease: FanoutClaim): Promise<ClaimedMessage[]> {
      const newest = Math.min(lease.newest?.limit ?? 0, lease.limit);
      const claimable = "fanned_out_at IS NULL AND (lease_until IS NULL OR lease_until <= :now)";
      const leaseThem = (ids: string) => `UPDATE postel_messages
        SET lease_token = ${leaseTokenSql("created_at", "id")}, lease_owner = :owner, lease_until = :until
        WHERE id IN (${ids})
        RETURNING ${CLAIMED_MESSAGE_JSON} AS claim`;
      const args = {
        nonce: newLeaseNonce(),
        ...leaseArgs(lease),
        ...(newest > 0 ? { newest, since: lease.newest?.since ?? 0 } : {}),
      };
      // Inside BEGIN IMMEDIATE; the subqueries walk only the un-fanned partial index. With `newest`, the
      // newest messages first, then the oldest up to the limit (`changes()`: how many the first took;
      // those are leased now, so the second cannot take them again).
      const statements =
        newest > 0
          ? [
              {
                sql: leaseThem(`SELECT id FROM postel_messages WHERE ${claimable} AND created_at >= :since
                  ORDER BY created_at DESC, id DESC LIMIT :newest`),
                args,
              },
              {
                sql: leaseThem(`SELECT id FROM postel_messages WHERE ${claimable}
                  ORDER BY created_at, id LIMIT :limit - changes()`),
                args,
              },
            ]
          : [
              {
                sql: leaseThem(
                  `SELECT id FROM postel_messages WHERE ${claimable} ORDER BY created_at, id LIMIT :limit`,
                ),
                args,
              },
            ];
      const results = await db.write(statements);
      const claimed = { rows: results.flatMap((result) => result?.rows ?? []) };
      return (claimed?.rows ?? [])
        .map((row) => toClaimedMessage(str(row, "claim")))
        .sort((a, b) => a.message.createdAt - b.message.createdAt || compareIds(a.message.id, b.message.id));
    },

    async recordFanout(
      results: FanoutResult[],
      now: number,
      lease?: { owner: string; until: number },
    ): Promise<ClaimedDelivery[]> {
      if (results.length === 0) return [];
      const nonce = newLeaseNonce();
      const deliveries = results.flatMap((result) =>
        result.expired
          ? []
          : // Written out: in V8 a spread plus fields costs microseconds per delivery.
            result.deliveries.map((d) => ({
              id: d.id,
              messageId: d.messageId,
              endpointId: d.endpointId,
              webhookId: d.webhookId,
              createdAt: d.createdAt,
              fenceId: result.messageId,
              token: result.token,
              leased: lease !== undefined && d.queued !== true ? 1 : 0,
            })),
      );
      // The status core gives each message (expired, or final with no delivery; null: pending).
      const fanned = results.map((r) => ({
        id: r.messageId,
        token: r.token,
        status: fanoutMessageStatus(r),
      }));
      const [, , leased] = await db.write([
        // Deliveries only for messages whose fan-out lease is still ours (checked before it is cleared).
        {
          sql: `INSERT INTO postel_deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used,
              attempts_made, next_attempt_at, lease_token, lease_owner, created_at, updated_at)
            SELECT j.id, j.messageId, j.endpointId, j.webhookId, 'pending', 0, 0,
              CASE WHEN j.leased THEN :due ELSE :now END,
              CASE WHEN j.leased THEN ${leaseTokenSql("j.idx", "j.id")} END,
              CASE WHEN j.leased THEN :owner END, j.createdAt, :now
            FROM (${jsonRows("deliveries", FANNED_DELIVERY_KEYS)}) j
            JOIN postel_messages m ON ${unfannedFence("m", "j.fenceId", "j.token")}`,
          args: {
            deliveries: jsonArg(deliveries, FANNED_DELIVERY_KEYS),
            due: lease ? lease.until : now,
            nonce,
            owner: lease ? lease.owner : null,
            now,
          },
        },
        {
          sql: `WITH r AS (${jsonRows("results", FANNED_KEYS)})
            UPDATE postel_messages SET
              fanned_out_at = :now, lease_token = NULL, lease_owner = NULL, lease_until = NULL,
              status = coalesce(r.status, postel_messages.status),
              finished_at = CASE WHEN r.status IS NULL THEN finished_at ELSE :now END
            FROM r
            WHERE ${unfannedFence("postel_messages", "r.id", "r.token")}`,
          args: { results: jsonArg(fanned, FANNED_KEYS), now },
        },
        ...(lease ? [selectLeased(nonce)] : []),
      ]);
      return (leased?.rows ?? []).map(toClaimed);
    },

    async renewFanoutLeases(
      leases: { messageId: string; token: string }[],
      until: number,
    ): Promise<string[]> {
      if (leases.length === 0) return [];
      const renewal = {
        sql: `WITH l AS (${jsonRows("leases", FANOUT_LEASE_KEYS)})
          UPDATE postel_messages SET lease_until = :until FROM l
          WHERE ${unfannedFence("postel_messages", "l.messageId", "l.token")}
          RETURNING postel_messages.id`,
        args: { leases: jsonArg(leases, FANOUT_LEASE_KEYS), until },
      };
      return renewHeld(
        db,
        renewal,
        leases.map((l) => l.messageId),
      );
    },
  };
}
