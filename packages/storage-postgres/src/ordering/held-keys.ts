import type { DeliveryStatus, HeldKey, HeldKeyQuery } from "@postel/core/storage";
import type { PendingQuery, Row, Sql } from "postgres";
import { pipelinedTransaction } from "../internal/pipelined-transaction.js";
import { keyPair } from "./key-pair.js";
import { lockKeys } from "./key-locks.js";
import { givenPairs, settleKeysStatement } from "./settle-keys.js";

/**
 * Held keys by endpoint id, then key (code-unit order: both columns are `COLLATE "C"`), walking the
 * primary key of `held_keys` from the `after` key; each with its head's message, status and last
 * error, and its waiting deliveries counted through `deliveries_key_open_idx` up to `countCap`.
 */
export async function listHeldKeys(sql: Sql, query: HeldKeyQuery): Promise<HeldKey[]> {
  const { endpointId, after, limit, countCap } = query;
  const rows = await sql<Row[]>`
    SELECT h.endpoint_id, h.ordering_key, h.delivery_id, h.held_at, d.message_id, d.status, d.last_error,
      (SELECT count(*) FROM (
        SELECT 1 FROM postel.deliveries w
        WHERE ${sql.unsafe(keyPair("w"))} = ${sql.unsafe(keyPair("h"))}
          AND w.ordering_key IS NOT NULL AND w.status IN ('pending', 'held', 'waiting') AND w.status = 'waiting'
        LIMIT ${countCap ?? null}::bigint
      ) c) AS waiting
    FROM postel.held_keys h JOIN postel.deliveries d ON d.id = h.delivery_id
    WHERE true
      ${endpointId === undefined ? sql`` : sql`AND h.endpoint_id = ${endpointId}`}
      ${after === undefined ? sql`` : sql`AND (h.endpoint_id, h.ordering_key) > (${after.endpointId}, ${after.orderingKey})`}
    ORDER BY h.endpoint_id, h.ordering_key
    LIMIT ${Math.max(0, limit)}`;
  return rows.map((row) => ({
    endpointId: row["endpoint_id"] as string,
    orderingKey: row["ordering_key"] as string,
    deliveryId: row["delivery_id"] as string,
    messageId: row["message_id"] as string,
    status: row["status"] as DeliveryStatus,
    lastError: row["last_error"] as string | null,
    heldAt: Number(row["held_at"]),
    waiting: Number(row["waiting"]),
  }));
}

/**
 * `ORDERING_RULES.skip`, one transaction: lock the key, delete its hold on the endpoint (returning the
 * head's delivery id; null when there was none) and let its earliest waiting delivery go, due `now`.
 */
export async function skipHeldKey(
  sql: Sql,
  endpointId: string,
  orderingKey: string,
  now: number,
): Promise<string | null> {
  const [, released] = await pipelinedTransaction(sql, (tx) => [
    lockKeys(tx, [orderingKey]),
    tx`
      DELETE FROM postel.held_keys
      WHERE endpoint_id = ${endpointId} AND ordering_key = ${orderingKey}
      RETURNING delivery_id`,
    settleKeysStatement(tx, givenPairs(tx, [{ endpointId, orderingKey }]), now),
  ]);
  return (released?.[0]?.["delivery_id"] as string | undefined) ?? null;
}

/** Deliveries `waiting` behind their key's head, of one endpoint or all, counted up to `cap`. */
export async function countWaiting(
  sql: Sql,
  query: { endpointId?: string | undefined; cap: number },
): Promise<number> {
  // With the workers' plan settings: no sequential scan, whatever the plan cached on the connection.
  const [rows] = await pipelinedTransaction(sql, (tx) => [countWaitingStatement(tx, query)]);
  const row = rows?.[0];
  return Number(row?.["n"] ?? 0);
}

/**
 * The statement itself: per endpoint (or the one), its waiting deliveries as a range of
 * `deliveries_key_open_idx`, never its history. Per endpoint in a LATERAL with a LIMIT (which the
 * planner cannot flatten into a join), as stats() does: a plan made while the deliveries were few
 * could otherwise scan them all.
 */
export function countWaitingStatement(
  sql: Sql,
  query: { endpointId?: string | undefined; cap: number },
): PendingQuery<Row[]> {
  const cap = Math.max(0, query.cap);
  return sql`
    SELECT count(*) AS n FROM (
      SELECT 1 FROM postel.endpoints e
      CROSS JOIN LATERAL (
        SELECT 1 FROM postel.deliveries d
        WHERE d.endpoint_id = e.id AND d.ordering_key IS NOT NULL AND d.status = 'waiting'
        LIMIT ${cap}
      ) w
      ${query.endpointId === undefined ? sql`` : sql`WHERE e.id = ${query.endpointId}`}
      LIMIT ${cap}
    ) c`;
}
