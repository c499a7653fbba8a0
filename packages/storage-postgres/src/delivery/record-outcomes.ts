import {
  type DeliveryOutcome,
  deliveryStatusOf,
  firstDirectOutcomes,
  onlyDeliveryFinalStatus,
  HEALTH_BUCKET_MS,
  isTerminal,
  type NextLease,
  type RecordOutcomesResult,
} from "@postel/core/storage";
import type { Sql } from "postgres";
import { pipelinedTransaction } from "../internal/pipelined-transaction.js";
import { asJson, epochMs, FIRST_ATTEMPT_COLUMNS } from "../internal/rows.js";
import { finaliseMessages, lockMessagesOf, PER_ROW, TERMINAL } from "../internal/sql-fragments.js";
import { toClaimedDelivery } from "../internal/lease-tokens.js";
import { keyPair } from "../ordering/key-pair.js";
import { lockKeys } from "../ordering/key-locks.js";
import { pairsOfOutcomes, settleKeysStatement } from "../ordering/settle-keys.js";

// A delivery's first attempt (number 1, the first recorded) goes in its row, the rest in `attempts`:
// first_attempt_<x> takes the input's <x> (first_attempt_id its attempt_id).
const FIRST_ATTEMPT_SET = FIRST_ATTEMPT_COLUMNS.map((column) => {
  const input = column === "first_attempt_id" ? "attempt_id" : column.slice("first_attempt_".length);
  return `${column} = CASE WHEN d.first_attempt_id IS NULL AND i.attempt_number = 1 THEN i.${input} ELSE d.${column} END`;
}).join(",\n          ");

// One flat JSON object per outcome, its attempt's columns inlined: the statement reads it with one
// json_to_recordset instead of a nested json_to_record per attempt. Every object has the same keys
// in the same order (null when absent), which keeps building and serialising them on V8's fast path.
function toInput(outcome: DeliveryOutcome) {
  const { transition, attempt, newDelivery } = outcome;
  return {
    delivery_id: outcome.deliveryId,
    lease_token: outcome.leaseToken,
    status: deliveryStatusOf(transition),
    next_attempt_at: "nextAttemptAt" in transition ? epochMs(transition.nextAttemptAt) : null,
    retries_used: transition.kind === "retry" ? transition.retriesUsed : null,
    set_error: outcome.lastError !== undefined,
    last_error: outcome.lastError ?? null,
    // Set only for a direct outcome: the delivery row to insert.
    message_id: newDelivery ? newDelivery.messageId : null,
    endpoint_id: newDelivery ? newDelivery.endpointId : null,
    webhook_id: newDelivery ? newDelivery.webhookId : null,
    created_at: newDelivery ? epochMs(newDelivery.createdAt) : null,
    // A direct delivery's key (ORDERING_RULES.directHead).
    ordering_key: newDelivery ? (newDelivery.orderingKey ?? null) : null,
    // A direct outcome's message: the final status its only delivery gives it (null: not final yet).
    message_status: newDelivery ? onlyDeliveryFinalStatus(transition) : null,
    attempt_id: attempt ? attempt.id : null,
    attempt_number: attempt ? attempt.attemptNumber : null,
    started_at: attempt ? epochMs(attempt.startedAt) : null,
    latency_ms: attempt ? epochMs(attempt.latencyMs) : null,
    outcome: attempt ? attempt.outcome : null,
    status_code: attempt ? attempt.statusCode : null,
    error_code: attempt ? attempt.errorCode : null,
    error: attempt ? attempt.error : null,
    response_snippet: attempt ? attempt.responseSnippet : null,
  };
}

/**
 * The whole batch in one round trip: a pipelined `BEGIN; lock messages; statement; COMMIT`. The
 * statement applies every transition whose lease token still matches (clearing the lease), inserts
 * the deliveries of direct outcomes whose message's fan-out token still matches (marking the message
 * fanned out, and finished when the outcome is terminal), records the attempts (a delivery's first in
 * its row, later ones in `attempts`), upserts the endpoint
 * health buckets and finalises messages whose deliveries are now all terminal. Only messages of
 * existing deliveries are locked first: a direct delivery is its message's only one.
 *
 * When a keyed delivery ends (`ORDERING_RULES.nextOnEnd`), the same transaction first locks the keys
 * of the keyed outcomes that end (`lockKeys`), holds the key of each one recorded with `holdKey` (a
 * CTE over the rows the statement changed: a lost lease holds nothing), then lets the next waiting
 * delivery of each other key go (`settleKeysStatement`): given `next`, the ones whose outcome has
 * `leaseNext` go leased to `next.owner` and come back in `next`. Other batches run as they did before.
 */
export async function recordOutcomes(
  sql: Sql,
  all: DeliveryOutcome[],
  now: number,
  next?: NextLease,
): Promise<RecordOutcomesResult> {
  if (all.length === 0) return { recorded: [], leaseLost: [] };
  const outcomes = firstDirectOutcomes(all);
  const input = asJson(outcomes.map(toInput));
  const ids = all.map((outcome) => outcome.deliveryId);
  const existing = outcomes.filter((outcome) => !outcome.newDelivery).map((outcome) => outcome.deliveryId);
  // Keyed outcomes that end their delivery: only they change which delivery heads their key.
  const ended = outcomes.filter(
    (outcome) => outcome.orderingKey !== undefined && isTerminal(deliveryStatusOf(outcome.transition)),
  );
  // Keyed messages delivered straight from their lease (ORDERING_RULES.directHead): their rows go in
  // under their keys' locks, behind a head a replay made meanwhile.
  const directKeys = outcomes.flatMap((outcome) =>
    outcome.newDelivery?.orderingKey === undefined ? [] : [outcome.newDelivery.orderingKey],
  );
  const locked = [...ended.map((outcome) => outcome.orderingKey!), ...directKeys];
  const leasing = new Set(
    next === undefined ? [] : ended.filter((outcome) => outcome.leaseNext === true).map((o) => o.deliveryId),
  );
  const holds = ended
    .filter((outcome) => outcome.holdKey === true)
    .map((outcome) => ({ delivery_id: outcome.deliveryId, ordering_key: outcome.orderingKey }));
  const results = await pipelinedTransaction(sql, (tx) => [
    ...(locked.length > 0 ? [lockKeys(tx, locked)] : []),
    ...(existing.length > 0
      ? [
          lockMessagesOf(
            tx,
            tx`d.id = ANY(ARRAY(SELECT json_array_elements_text(${asJson(existing)}::text::json)))`,
          ),
        ]
      : []),
    tx`
      WITH input AS (
        SELECT * FROM json_to_recordset(${input}::text::json) AS i(delivery_id text, lease_token text,
          status text, next_attempt_at bigint, retries_used int, set_error boolean, last_error text,
          message_id text, endpoint_id text, webhook_id text, created_at bigint, ordering_key text, message_status text, attempt_id text,
          attempt_number int, started_at bigint, latency_ms int, outcome text, status_code int, error_code text,
          error text, response_snippet text)
      ), changed AS (
        UPDATE postel.deliveries d SET
          status = i.status,
          -- A finished delivery keeps when it finished (not its lease expiry): attemptsAfter reads the
          -- ones finished since a time by it.
          next_attempt_at = CASE WHEN i.status IN ${sql.unsafe(TERMINAL)} THEN ${now}::bigint
            ELSE COALESCE(i.next_attempt_at, d.next_attempt_at) END,
          retries_used = COALESCE(i.retries_used, d.retries_used),
          attempts_made = d.attempts_made + (i.attempt_id IS NOT NULL)::int,
          lease_token = NULL,
          lease_owner = NULL,
          last_error = CASE WHEN i.set_error THEN i.last_error ELSE d.last_error END,
          updated_at = ${now}::bigint,
          ${sql.unsafe(FIRST_ATTEMPT_SET)}
        FROM input i
        -- A lease token implies pending (every way out of pending clears it). Testing the status too
        -- would match the partial due index's predicate and make the planner scan it, not the key.
        -- The keys as an array too (an index condition whatever the statistics, see pipelinedTransaction).
        WHERE i.message_id IS NULL AND d.id = i.delivery_id AND d.lease_token = i.lease_token
          AND d.id = ANY(ARRAY(SELECT delivery_id FROM input WHERE message_id IS NULL))
        RETURNING d.id, d.message_id, d.endpoint_id, d.webhook_id, d.status, i.attempt_id, i.attempt_number,
          i.started_at, i.latency_ms, i.outcome, i.status_code, i.error_code, i.error, i.response_snippet,
          d.first_attempt_id IS NOT DISTINCT FROM i.attempt_id AS in_row
      ), fanned AS (
        -- Direct outcomes: the message's fan-out token fences the insert of its only delivery.
        UPDATE postel.messages m SET
          fanned_out_at = ${now}::bigint, lease_token = NULL, lease_owner = NULL, lease_until = NULL,
          status = coalesce(i.message_status, m.status),
          finished_at = CASE WHEN i.message_status IS NULL THEN m.finished_at ELSE ${now}::bigint END
        FROM input i
        WHERE i.message_id IS NOT NULL AND m.id = i.message_id AND m.lease_token = i.lease_token
          AND m.fanned_out_at IS NULL AND m.id = ANY(ARRAY(SELECT message_id FROM input WHERE message_id IS NOT NULL))
        RETURNING i.*
      ), inserted AS (
        -- A direct delivery's attempt is its first: it goes in the row.
        INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used,
          attempts_made, next_attempt_at, last_error, created_at, updated_at, first_attempt_id,
          first_attempt_started_at, first_attempt_latency_ms, first_attempt_outcome, first_attempt_status_code,
          first_attempt_error_code, first_attempt_error, first_attempt_response_snippet${directKeys.length > 0 ? tx`, ordering_key` : tx``})
        SELECT delivery_id, message_id, endpoint_id, webhook_id, ${
          directKeys.length > 0
            ? tx`CASE WHEN f.ordering_key IS NOT NULL AND f.status = 'pending' AND (EXISTS (
                SELECT 1 FROM postel.deliveries o
                WHERE ${tx.unsafe(keyPair("o"))} = ((f.endpoint_id || ' ' || f.ordering_key) COLLATE "C")
                  AND o.ordering_key IS NOT NULL AND o.status IN ('pending', 'held') ${tx.unsafe(PER_ROW)})
              OR EXISTS (SELECT 1 FROM postel.held_keys k
                WHERE k.endpoint_id = f.endpoint_id AND k.ordering_key = f.ordering_key ${tx.unsafe(PER_ROW)}))
              THEN 'waiting' ELSE f.status END`
            : tx`status`
        }, COALESCE(retries_used, 0),
          (attempt_id IS NOT NULL)::int, COALESCE(next_attempt_at, ${now}::bigint),
          CASE WHEN set_error THEN last_error END, created_at, ${now}::bigint, attempt_id, started_at, latency_ms,
          outcome, status_code, error_code, error, response_snippet${directKeys.length > 0 ? tx`, f.ordering_key` : tx``}
        FROM fanned f
      ), later_attempts AS (
        -- Every CTE reads input or the RETURNING of another, never joins two: no quadratic nested loops.
        INSERT INTO postel.attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
          started_at, latency_ms, outcome, status_code, error_code, error, response_snippet)
        SELECT attempt_id, id, message_id, endpoint_id, webhook_id, attempt_number, started_at,
          latency_ms, outcome, status_code, error_code, error, response_snippet
        FROM changed
        WHERE attempt_id IS NOT NULL AND NOT in_row
      ), health AS (
        INSERT INTO postel.endpoint_health AS h (endpoint_id, bucket_start, attempts, failures)
        SELECT endpoint_id, (started_at / ${HEALTH_BUCKET_MS}::bigint) * ${HEALTH_BUCKET_MS}::bigint,
          count(*), count(*) FILTER (WHERE outcome <> 'success')
        FROM (
          SELECT endpoint_id, started_at, outcome FROM changed WHERE attempt_id IS NOT NULL
          UNION ALL
          SELECT endpoint_id, started_at, outcome FROM fanned WHERE attempt_id IS NOT NULL
        ) a
        GROUP BY 1, 2
        ON CONFLICT (endpoint_id, bucket_start) DO UPDATE
          SET attempts = h.attempts + excluded.attempts, failures = h.failures + excluded.failures
      ), ${
        holds.length === 0
          ? tx``
          : tx`held AS (
        -- Only deliveries this statement ended: a lost lease holds nothing.
        INSERT INTO postel.held_keys (endpoint_id, ordering_key, delivery_id, held_at)
        SELECT c.endpoint_id, h.ordering_key, c.id, ${now}::bigint
        FROM (SELECT id, endpoint_id, status FROM changed
          UNION ALL SELECT delivery_id, endpoint_id, status FROM fanned) c
        JOIN json_to_recordset(${asJson(holds)}::text::json) AS h(delivery_id text, ordering_key text)
          ON h.delivery_id = c.id
        WHERE c.status IN ('dead-lettered', 'failed')
        ON CONFLICT DO NOTHING
      ), `
      }${
        directKeys.length === 0
          ? tx``
          : tx`unrefused AS (
        -- The message after each clear one of its key goes now if its fan-out was refused while the
        -- clear one was in flight (no token, a refused one's wait: REFUSED_FANOUT_RETRY_MS). Only
        -- that one, the key's next: one probe of messages_unfanned_key_idx from the clear message on
        -- (the clear one is still unfanned in this statement's snapshot), not a walk of the key's
        -- whole backlog per delivery. A later refused one is claimed again after its wait.
        UPDATE postel.messages m SET lease_until = NULL
        WHERE m.id = ANY(ARRAY(
          SELECT n.id FROM input i CROSS JOIN LATERAL (
            SELECT e.id, e.lease_token, e.lease_until FROM postel.messages e
            WHERE e.ordering_key = i.ordering_key AND e.fanned_out_at IS NULL AND e.status = 'pending'
              AND e.id > i.message_id
            ORDER BY e.id LIMIT 1
          ) n
          WHERE i.message_id IS NOT NULL AND i.ordering_key IS NOT NULL
            AND n.lease_token IS NULL AND n.lease_until > ${now}::bigint))
          AND m.fanned_out_at IS NULL AND m.status = 'pending' AND m.lease_token IS NULL AND m.lease_until > ${now}::bigint
      ), `
      }${finaliseMessages(tx, now)}
      -- Only the outcomes not recorded come back: usually none.
      SELECT delivery_id AS id FROM input
      WHERE delivery_id NOT IN (SELECT id FROM changed UNION ALL SELECT delivery_id FROM fanned)`,
    ...(ended.length > 0
      ? [
          settleKeysStatement(
            tx,
            // A direct outcome's delivery is this transaction's own insert: its pair is known.
            pairsOfOutcomes(
              tx,
              ended.filter((outcome) => !outcome.newDelivery).map((outcome) => outcome.deliveryId),
              ended.flatMap((outcome) =>
                outcome.newDelivery === undefined
                  ? []
                  : [
                      {
                        endpoint_id: outcome.newDelivery.endpointId,
                        ordering_key: outcome.orderingKey!,
                        lease: leasing.has(outcome.deliveryId),
                      },
                    ],
              ),
              leasing,
            ),
            now,
            leasing.size > 0 ? next : undefined,
          ),
        ]
      : []),
  ]);
  const rows = results.at(ended.length > 0 ? -2 : -1);
  const lost = new Set((rows ?? []).map((row) => row["id"] as string));
  if (outcomes.length < all.length) {
    // Direct outcomes firstDirectOutcomes dropped (a second one for the same message) are lease lost.
    const applied = new Set(outcomes);
    for (const outcome of all) if (!applied.has(outcome)) lost.add(outcome.deliveryId);
  }
  const leased = leasing.size > 0 ? (results.at(-1) ?? []).map((row) => toClaimedDelivery(row)) : [];
  return {
    recorded: ids.filter((id) => !lost.has(id)),
    leaseLost: ids.filter((id) => lost.has(id)),
    // Present whenever it was asked to lease (ORDERING_RULES.leaseNext): every next let go is here.
    ...(leasing.size > 0 ? { next: leased } : {}),
  };
}
