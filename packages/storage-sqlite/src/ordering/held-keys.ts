import type { InValue } from "@libsql/client";
import type { HeldKey, HeldKeyQuery, OrderingStore } from "@postel/core/storage";
import type { Db, Statement } from "../internal/database.js";
import { int, str, strOrNull } from "../internal/rows.js";
import { keysOf, openKeyed, settleKeys } from "./settle-keys.js";

/** `count(*)` of `rows`, stopping at `:cap` (-1: exact). */
const capped = (rows: string) => `(SELECT count(*) FROM (${rows} LIMIT :cap))`;

/** SQLite's LIMIT of a count capped at `cap`: -1 reads them all. */
function capOf(cap: number | undefined): number {
  return cap === undefined ? -1 : Math.max(0, Math.floor(cap));
}

/**
 * A page of held keys with their heads (tests EXPLAIN it): the held-keys primary key walked in order
 * from `after`, each key's waiting deliveries counted on the open-keyed partial index. Only the
 * conditions `query` gives are in the WHERE (SQLite plans a statement once for any argument).
 */
export function listHeldKeysStatement(query: HeldKeyQuery): Statement {
  const where: string[] = [];
  const args: Record<string, InValue> = { limit: Math.max(0, query.limit), cap: capOf(query.countCap) };
  if (query.endpointId !== undefined) {
    where.push("hk.endpoint_id = :endpointId");
    args["endpointId"] = query.endpointId;
  }
  if (query.after !== undefined) {
    where.push("(hk.endpoint_id, hk.ordering_key) > (:afterEndpoint, :afterKey)");
    args["afterEndpoint"] = query.after.endpointId;
    args["afterKey"] = query.after.orderingKey;
  }
  const waiting = `SELECT 1 FROM postel_deliveries w
    WHERE w.endpoint_id = hk.endpoint_id AND w.ordering_key = hk.ordering_key AND w.status = 'waiting'
      AND ${openKeyed("w")}`;
  return {
    sql: `SELECT hk.endpoint_id, hk.ordering_key, hk.delivery_id, hk.held_at, d.message_id, d.status,
        d.last_error, ${capped(waiting)} AS waiting
      FROM postel_held_keys hk JOIN postel_deliveries d ON d.id = hk.delivery_id
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY hk.endpoint_id, hk.ordering_key LIMIT :limit`,
    args,
  };
}

/** `countWaiting` (tests EXPLAIN it): the waiting deliveries of one endpoint or all, up to `cap`. */
export function countWaitingStatement(query: { endpointId?: string | undefined; cap: number }): Statement {
  const endpoint = query.endpointId === undefined ? "" : " AND endpoint_id = :endpointId";
  return {
    sql: `SELECT ${capped(`SELECT 1 FROM postel_deliveries d WHERE d.status = 'waiting' AND ${openKeyed("d")}${endpoint}`)} AS n`,
    args: {
      cap: capOf(query.cap),
      ...(query.endpointId === undefined ? {} : { endpointId: query.endpointId }),
    },
  };
}

/** The `ordering` capability: held keys for operators, and the count of deliveries waiting behind heads. */
export function orderingStore(db: Db): OrderingStore {
  return {
    async listHeldKeys(query: HeldKeyQuery): Promise<HeldKey[]> {
      const rows = await db.read(listHeldKeysStatement(query));
      return rows.map((row) => ({
        endpointId: str(row, "endpoint_id"),
        orderingKey: str(row, "ordering_key"),
        deliveryId: str(row, "delivery_id"),
        messageId: str(row, "message_id"),
        status: str(row, "status") as HeldKey["status"],
        lastError: strOrNull(row, "last_error"),
        heldAt: int(row, "held_at"),
        waiting: int(row, "waiting"),
      }));
    },

    async skipHeldKey(endpointId: string, orderingKey: string, now: number): Promise<string | null> {
      // ORDERING_RULES.skip: release the hold, then let the key's earliest waiting delivery go.
      const [released] = await db.write([
        {
          sql: `DELETE FROM postel_held_keys WHERE endpoint_id = :endpointId AND ordering_key = :orderingKey
            RETURNING delivery_id`,
          args: { endpointId, orderingKey },
        },
        settleKeys(keysOf("keys"), { keys: JSON.stringify([[endpointId, orderingKey]]), now }),
      ]);
      const row = released?.rows[0];
      return row ? str(row, "delivery_id") : null;
    },

    async countWaiting(query: { endpointId?: string | undefined; cap: number }): Promise<number> {
      const [row] = await db.read(countWaitingStatement(query));
      return row ? int(row, "n") : 0;
    },
  };
}
