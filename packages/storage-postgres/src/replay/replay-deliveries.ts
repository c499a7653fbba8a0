import type { DeliveryRecord, DeliveryReset, ReplaySelector } from "@postel/core/storage";
import type { Sql } from "postgres";
import { pipelinedTransaction } from "../internal/pipelined-transaction.js";
import {
  DELIVERY_COLUMNS,
  FIRST_ATTEMPT_COLUMNS,
  type RawRow,
  asJson,
  toDelivery,
} from "../internal/rows.js";
import { REPLAYABLE, lockMessagesOf } from "../internal/sql-fragments.js";
import { lockKeys } from "../ordering/key-locks.js";
import { pairsOfDeliveries, settleKeysStatement } from "../ordering/settle-keys.js";

/** Terminal (not cancelled) deliveries of the given messages, or of one endpoint over a time range. */
export async function findReplayable(
  sql: Sql,
  selector: ReplaySelector,
  limit: number,
): Promise<DeliveryRecord[]> {
  const rows =
    "messageIds" in selector
      ? await sql<RawRow[]>`
          SELECT ${sql.unsafe(DELIVERY_COLUMNS)} FROM postel.deliveries d
          WHERE d.message_id IN (SELECT json_array_elements_text(${asJson(selector.messageIds)}::text::json))
            AND d.status IN ${sql.unsafe(REPLAYABLE)}
            ${selector.endpointId === undefined ? sql`` : sql`AND d.endpoint_id = ${selector.endpointId}`}
            ${onlyStatuses(sql, selector)}
          ORDER BY d.id
          LIMIT ${limit}`
      : await sql<RawRow[]>`
          SELECT ${sql.unsafe(DELIVERY_COLUMNS)} FROM postel.deliveries d
          JOIN postel.messages m ON m.id = d.message_id
          WHERE d.endpoint_id = ${selector.endpointId} AND d.status IN ${sql.unsafe(REPLAYABLE)}
            AND m.created_at >= ${selector.since}::bigint AND m.created_at < ${selector.until}::bigint
            ${onlyStatuses(sql, selector)}
          ORDER BY d.id
          LIMIT ${limit}`;
  return rows.map(toDelivery);
}

const TERMINAL = ["succeeded", "failed", "dead-lettered", "expired"] as const;

/**
 * The selector's status filter (none: every terminal status), as literals of a fixed list: as
 * parameters, the generic plan Postgres settles on after five calls cannot narrow the index scan by
 * status, and read all of a busy endpoint's deliveries (219 ms beside 26,000 of them, 7 ms so).
 */
function onlyStatuses(sql: Sql, selector: ReplaySelector) {
  if (selector.statuses === undefined) return sql``;
  const statuses = TERMINAL.filter((status) => selector.statuses!.includes(status));
  return statuses.length === 0
    ? sql`AND false`
    : sql.unsafe(`AND d.status IN (${statuses.map((status) => `'${status}'`).join(", ")})`);
}

/**
 * Puts each delivery that is still terminal back to `pending` (due `now`, retries and lease cleared,
 * the given `webhookId`) and its message back to `pending`, atomically; returns the ids reset. A first
 * attempt kept in the delivery's row moves to `attempts` with the webhook id it was sent under.
 *
 * A keyed delivery keeps its place (`ORDERING_RULES.replayKeepsPlace`): the transaction first locks
 * its key, the delivery goes back `waiting` (a hold it held itself is released) and its key then gets
 * its head (`settleKeysStatement`): it goes first when nothing else heads or holds the key. Its key is
 * read first, by primary key (a delivery's key never changes): replays without keys run as before.
 */
export async function resetDeliveries(sql: Sql, resets: DeliveryReset[], now: number): Promise<string[]> {
  if (resets.length === 0) return [];
  const ids = resets.map((reset) => reset.deliveryId);
  const keys = await sql<{ ordering_key: string }[]>`
    SELECT DISTINCT ordering_key FROM postel.deliveries WHERE id = ANY(${ids}::text[]) AND ordering_key IS NOT NULL`;
  const keyed = keys.length > 0;
  const results = await pipelinedTransaction(sql, (tx) => [
    ...(keyed
      ? [
          lockKeys(
            tx,
            keys.map((row) => row.ordering_key),
          ),
        ]
      : []),
    lockMessagesOf(tx, tx`d.id = ANY(ARRAY(SELECT json_array_elements_text(${asJson(ids)}::text::json)))`),
    tx`
      WITH input AS (
        SELECT * FROM json_to_recordset(${asJson(resets)}::text::json) AS i("deliveryId" text, "webhookId" text)
      ), reset AS (
        -- "was" is the row as this statement's snapshot saw it (unchanged since: its message is locked).
        UPDATE postel.deliveries d SET
          status = ${keyed ? tx`CASE WHEN d.ordering_key IS NULL THEN 'pending' ELSE 'waiting' END` : tx`'pending'`},
          next_attempt_at = ${now}::bigint, retries_used = 0,
          lease_token = NULL, lease_owner = NULL, webhook_id = i."webhookId", updated_at = ${now}::bigint,
          ${tx.unsafe(FIRST_ATTEMPT_COLUMNS.map((column) => `${column} = NULL`).join(", "))}
        FROM input i JOIN postel.deliveries was ON was.id = i."deliveryId"
        WHERE d.id = i."deliveryId" AND d.status IN ${tx.unsafe(REPLAYABLE)}
        RETURNING d.id, d.message_id, d.endpoint_id, was.webhook_id,${keyed ? tx` d.ordering_key,` : tx``}
          ${tx.unsafe(FIRST_ATTEMPT_COLUMNS.map((column) => `was.${column}`).join(", "))}
      ), moved AS (
        INSERT INTO postel.attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
          started_at, latency_ms, outcome, status_code, error_code, error, response_snippet)
        SELECT first_attempt_id, id, message_id, endpoint_id, webhook_id, 1, first_attempt_started_at,
          first_attempt_latency_ms, first_attempt_outcome, first_attempt_status_code, first_attempt_error_code,
          first_attempt_error, first_attempt_response_snippet
        FROM reset WHERE first_attempt_id IS NOT NULL
      ), reopened AS (
        UPDATE postel.messages m SET status = 'pending', finished_at = NULL
        WHERE m.id IN (SELECT message_id FROM reset)
      )${
        keyed
          ? tx`, released AS (
        -- A hold the replayed delivery held itself: the key goes on from it.
        DELETE FROM postel.held_keys k USING reset r
        WHERE k.endpoint_id = r.endpoint_id AND k.ordering_key = r.ordering_key AND k.delivery_id = r.id
      )`
          : tx``
      }
      SELECT id FROM reset`,
    ...(keyed ? [settleKeysStatement(tx, pairsOfDeliveries(tx, ids), now, undefined, true)] : []),
  ]);
  const rows = results.at(keyed ? -2 : -1);
  return (rows ?? []).map((row) => row["id"] as string);
}
