import {
  type ClaimedDelivery,
  type ClaimedMessage,
  type FanoutClaim,
  type FanoutResult,
  fanoutMessageStatus,
  REFUSED_FANOUT_RETRY_MS,
} from "@postel/core/storage";
import type { InArgs } from "@libsql/client";
import type { Db, Statement } from "../internal/database.js";
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
import { keysOf, settleKeys } from "../ordering/settle-keys.js";

const FANNED_DELIVERY_KEYS = [
  "id",
  "messageId",
  "endpointId",
  "webhookId",
  "createdAt",
  "fenceId",
  "token",
  "leased",
  "orderingKey",
] as const;
const FANNED_KEYS = ["id", "token", "status"] as const;
const FENCE_KEYS = ["messageId", "token"] as const;
const FANOUT_LEASE_KEYS = ["messageId", "token"] as const;

/** The fan-out verbs: the fan-out lease over messages not yet fanned out, and its renewal (`direct`). */
export function fanout(db: Db) {
  return {
    async claimFanout(lease: FanoutClaim): Promise<ClaimedMessage[]> {
      const statements = claimFanoutStatements(lease);
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
              orderingKey: d.orderingKey ?? null,
            })),
      );
      // The status core gives each message (expired, or final with no delivery; null: pending).
      const fanned = results.map((r) => ({
        id: r.messageId,
        token: r.token,
        status: fanoutMessageStatus(r),
      }));
      const deliveryRows = jsonArg(deliveries, FANNED_DELIVERY_KEYS);
      const keyed = results.some((r) => r.orderingKey !== undefined);
      const keys = keysOfNew(deliveries);
      const leasing = { due: lease ? lease.until : now, nonce, owner: lease ? lease.owner : null };
      const written = await db.write([
        // Before anything is written: a keyed message behind an earlier one of its key loses its lease,
        // so the fences below skip it.
        ...(keyed ? [freeBlocked(jsonArg(results, FENCE_KEYS), now)] : []),
        // Deliveries only for messages whose fan-out lease is still ours (checked before it is cleared).
        // A keyed one waits; `settleKeys` below lets the first of its key go.
        {
          sql: `INSERT INTO postel_deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used,
              attempts_made, next_attempt_at, lease_token, lease_owner, created_at, updated_at, ordering_key)
            SELECT j.id, j.messageId, j.endpointId, j.webhookId,
              CASE WHEN j.orderingKey IS NULL THEN 'pending' ELSE 'waiting' END, 0, 0,
              CASE WHEN j.leased AND j.orderingKey IS NULL THEN :due ELSE :now END,
              CASE WHEN j.leased AND j.orderingKey IS NULL THEN ${leaseTokenSql("j.idx", "j.id")} END,
              CASE WHEN j.leased AND j.orderingKey IS NULL THEN :owner END, j.createdAt, :now, j.orderingKey
            FROM (${jsonRows("deliveries", FANNED_DELIVERY_KEYS)}) j
            JOIN postel_messages m ON ${unfannedFence("m", "j.fenceId", "j.token")}`,
          args: { deliveries: deliveryRows, ...leasing, now },
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
        ...(keys.length > 0 ? [settleKeys(keysOf("keys"), { keys: JSON.stringify(keys), now })] : []),
        ...(keys.length > 0 && lease ? [leaseNewHeads(deliveryRows, leasing)] : []),
        ...(lease ? [selectLeased(nonce)] : []),
      ]);
      return lease ? (written.at(-1)?.rows ?? []).map(toClaimed) : [];
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

/**
 * The statements of a fan-out claim: with `newest`, the newest claimable messages
 * first, then the oldest up to the limit; each leases what it selects and returns it.
 */
function claimFanoutStatements(lease: FanoutClaim): Statement[] {
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
  // those are leased now, so the second cannot take them again). With `only`, the first alone.
  const fromNewest = {
    sql: leaseThem(`SELECT id FROM postel_messages WHERE ${claimable} AND created_at >= :since
              ORDER BY created_at DESC, id DESC LIMIT :newest`),
    args,
  };
  if (newest > 0 && lease.newest?.only === true) return [fromNewest];
  return newest > 0
    ? [
        fromNewest,
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
}

/** The distinct `[endpointId, orderingKey]` pairs of the keyed deliveries among `deliveries`. */
function keysOfNew(deliveries: { endpointId: string; orderingKey: string | null }[]): [string, string][] {
  const keys = new Map<string, [string, string]>();
  for (const { endpointId, orderingKey } of deliveries) {
    if (orderingKey !== null) keys.set(JSON.stringify([endpointId, orderingKey]), [endpointId, orderingKey]);
  }
  return [...keys.values()];
}

/**
 * `ORDERING_RULES.fanoutInOrder`: take the fan-out lease of each keyed message of `results` (still
 * fenced) that an earlier message of its key, not fanned out and not fenced by this call, precedes: no
 * token (no fence below matches it), claimable again after `REFUSED_FANOUT_RETRY_MS` (tests EXPLAIN it).
 * Refusing one never unblocks another (its own earlier message blocks that one too), so the order
 * SQLite visits them in does not matter.
 */
export function freeBlocked(fences: string, now: number): Statement {
  return {
    sql: `WITH r AS (${jsonRows("fences", FENCE_KEYS)})
      UPDATE postel_messages SET lease_token = NULL, lease_owner = NULL, lease_until = :retryAt
      FROM r
      WHERE ${unfannedFence("postel_messages", "r.messageId", "r.token")} AND postel_messages.ordering_key IS NOT NULL
        AND EXISTS (SELECT 1 FROM postel_messages e
          WHERE e.ordering_key = postel_messages.ordering_key AND e.id < postel_messages.id
            AND e.fanned_out_at IS NULL AND e.status = 'pending'
            -- A lease token names its message, so holding one of this call's tokens is being fenced by it.
            AND (e.lease_token IS NULL OR e.lease_token NOT IN (SELECT token FROM r)))`,
    args: { fences, retryAt: now + REFUSED_FANOUT_RETRY_MS },
  };
}

/**
 * Lease to the caller the keyed deliveries of this call that `settleKeys` just made their key's head
 * (created waiting, so pending now means promoted), unless queued.
 */
function leaseNewHeads(deliveryRows: string, args: InArgs): Statement {
  return {
    sql: `WITH j AS (${jsonRows("deliveries", FANNED_DELIVERY_KEYS)})
      UPDATE postel_deliveries SET lease_token = ${leaseTokenSql("j.idx", "j.id")}, lease_owner = :owner,
        next_attempt_at = :due
      FROM j
      WHERE postel_deliveries.id = j.id AND j.leased AND j.orderingKey IS NOT NULL
        AND postel_deliveries.status = 'pending' AND postel_deliveries.lease_token IS NULL`,
    args: { deliveries: deliveryRows, ...args },
  };
}
