import type { DeliveryRecord, DeliveryReset, ReplaySelector } from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { str, toDelivery } from "../internal/rows.js";
import { jsonArg, jsonRows, REPLAYABLE_STATUSES } from "../internal/sql-fragments.js";
import { keysOfDeliveries, settleKeys } from "../ordering/settle-keys.js";

const RESET_KEYS = ["deliveryId", "webhookId"] as const;

/** The replay verbs: find terminal deliveries, put them back in the queue. */
export function replayStore(db: Db) {
  return {
    /** Oldest delivery id first, capped at `limit`; `cancelled` deliveries are never replayable. */
    async findReplayable(selector: ReplaySelector, limit: number): Promise<DeliveryRecord[]> {
      const rows = await db.read(
        "messageIds" in selector
          ? {
              sql: `SELECT * FROM postel_deliveries
                WHERE message_id IN (SELECT value FROM json_each(:messageIds)) AND status IN ${REPLAYABLE_STATUSES}
                  AND (:endpointId IS NULL OR endpoint_id = :endpointId)
                  AND (:statuses IS NULL OR status IN (SELECT value FROM json_each(:statuses)))
                ORDER BY id LIMIT :limit`,
              args: {
                messageIds: JSON.stringify(selector.messageIds),
                endpointId: selector.endpointId ?? null,
                statuses: statusesArg(selector),
                limit: Math.max(0, limit),
              },
            }
          : {
              sql: `SELECT d.* FROM postel_deliveries d JOIN postel_messages m ON m.id = d.message_id
                WHERE d.endpoint_id = :endpointId AND d.status IN ${REPLAYABLE_STATUSES}
                  AND m.created_at >= :since AND m.created_at < :until
                  AND (:statuses IS NULL OR d.status IN (SELECT value FROM json_each(:statuses)))
                ORDER BY d.id LIMIT :limit`,
              args: {
                endpointId: selector.endpointId,
                statuses: statusesArg(selector),
                since: selector.since,
                until: selector.until,
                limit: Math.max(0, limit),
              },
            },
      );
      return rows.map(toDelivery);
    },

    async resetDeliveries(resets: DeliveryReset[], now: number): Promise<string[]> {
      if (resets.length === 0) return [];
      const json = jsonArg(resets, RESET_KEYS);
      const [, reset] = await db.write([
        // ORDERING_RULES.replayKeepsPlace: a hold the replayed delivery held is released...
        {
          sql: `DELETE FROM postel_held_keys WHERE delivery_id IN (SELECT d.id FROM postel_deliveries d
            WHERE d.id IN (SELECT deliveryId FROM (${jsonRows("resets", RESET_KEYS)})) AND d.status IN ${REPLAYABLE_STATUSES})`,
          args: { resets: json },
        },
        // ...and a keyed one waits in its key's queue by its message id, until `settleKeys` lets it go.
        {
          sql: `WITH r AS (${jsonRows("resets", RESET_KEYS)})
            UPDATE postel_deliveries SET
              status = CASE WHEN ordering_key IS NULL THEN 'pending' ELSE 'waiting' END,
              next_attempt_at = :now, retries_used = 0,
              lease_token = NULL, lease_owner = NULL, webhook_id = r.webhookId, updated_at = :now
            FROM r
            WHERE postel_deliveries.id = r.deliveryId AND postel_deliveries.status IN ${REPLAYABLE_STATUSES}
            RETURNING postel_deliveries.id`,
          args: { resets: json, now },
        },
        {
          sql: `UPDATE postel_messages SET status = 'pending', finished_at = NULL
            WHERE id IN (SELECT message_id FROM postel_deliveries
              WHERE id IN (SELECT deliveryId FROM (${jsonRows("resets", RESET_KEYS)})) AND status IN ('pending', 'waiting'))`,
          args: { resets: json },
        },
        settleKeys(keysOfDeliveries("ids"), { ids: JSON.stringify(resets.map((r) => r.deliveryId)), now }),
      ]);
      const done = new Set(reset?.rows.map((row) => str(row, "id")));
      // `delete` so an id listed twice is reported once, as it was reset once.
      return resets.map((r) => r.deliveryId).filter((id) => done.delete(id));
    },
  };
}

/** The selector's statuses as a JSON list for `json_each`, or null for every terminal status. */
function statusesArg(selector: ReplaySelector): string | null {
  return selector.statuses === undefined ? null : JSON.stringify(selector.statuses);
}
