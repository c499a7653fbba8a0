import {
  type DeliveryOutcome,
  type DeliveryTransition,
  HEALTH_BUCKET_MS,
  type RecordOutcomesResult,
} from "@postel/core";
import type { Sql } from "postgres";
import { pipelinedTransaction } from "../internal/pipelined-transaction.js";
import { asJson, epochMs } from "../internal/rows.js";
import { finaliseMessages, lockMessagesOf } from "./finalise-messages.js";

const STATUS_OF: Record<DeliveryTransition["kind"], string> = {
  succeeded: "succeeded",
  retry: "pending",
  failed: "failed",
  "dead-lettered": "dead-lettered",
  expired: "expired",
  deferred: "pending",
  held: "held",
  cancelled: "cancelled",
};

function toInput(outcome: DeliveryOutcome) {
  const { transition, attempt } = outcome;
  return {
    delivery_id: outcome.deliveryId,
    lease_token: outcome.leaseToken,
    status: STATUS_OF[transition.kind],
    next_attempt_at: "nextAttemptAt" in transition ? epochMs(transition.nextAttemptAt) : null,
    retries_used: transition.kind === "retry" ? transition.retriesUsed : null,
    set_error: outcome.lastError !== undefined,
    last_error: outcome.lastError ?? null,
    attempt: attempt
      ? { ...attempt, startedAt: epochMs(attempt.startedAt), latencyMs: epochMs(attempt.latencyMs) }
      : null,
  };
}

/**
 * The whole batch in one round trip: a pipelined `BEGIN; lock messages; statement; COMMIT`. The
 * statement applies every transition whose lease token still matches (clearing the lease), inserts
 * the attempts, upserts the endpoint health buckets and finalises messages whose deliveries are now
 * all terminal.
 */
export async function recordOutcomes(
  sql: Sql,
  outcomes: DeliveryOutcome[],
  now: number,
): Promise<RecordOutcomesResult> {
  if (outcomes.length === 0) return { recorded: [], leaseLost: [] };
  const input = asJson(outcomes.map(toInput));
  const ids = outcomes.map((outcome) => outcome.deliveryId);
  const [, rows] = await pipelinedTransaction(sql, (tx) => [
    lockMessagesOf(tx, tx`d.id IN (SELECT jsonb_array_elements_text(${asJson(ids)}::text::jsonb))`),
    tx`
      WITH input AS (
        SELECT * FROM jsonb_to_recordset(${input}::text::jsonb) AS i(delivery_id text, lease_token text,
          status text, next_attempt_at bigint, retries_used int, set_error boolean, last_error text, attempt jsonb)
      ), changed AS (
        UPDATE postel.deliveries d SET
          status = i.status,
          next_attempt_at = COALESCE(i.next_attempt_at, d.next_attempt_at),
          retries_used = COALESCE(i.retries_used, d.retries_used),
          attempts_made = d.attempts_made + (i.attempt IS NOT NULL)::int,
          lease_token = NULL,
          lease_owner = NULL,
          last_error = CASE WHEN i.set_error THEN i.last_error ELSE d.last_error END,
          updated_at = ${now}::bigint
        FROM input i
        -- A lease token implies pending (every way out of pending clears it). Testing the status too
        -- would match the partial due index's predicate and make the planner scan it, not the key.
        WHERE d.id = i.delivery_id AND d.lease_token = i.lease_token
        RETURNING d.id, d.message_id, d.status
      ), recorded_attempts AS (
        INSERT INTO postel.attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
          started_at, latency_ms, outcome, status_code, error_code, error, response_snippet)
        SELECT a.id, a."deliveryId", a."messageId", a."endpointId", a."webhookId", a."attemptNumber",
          a."startedAt", a."latencyMs", a.outcome, a."statusCode", a."errorCode", a.error, a."responseSnippet"
        FROM input i
        JOIN changed c ON c.id = i.delivery_id
        CROSS JOIN LATERAL jsonb_to_record(i.attempt) AS a(id text, "deliveryId" text, "messageId" text,
          "endpointId" text, "webhookId" text, "attemptNumber" int, "startedAt" bigint, "latencyMs" int,
          outcome text, "statusCode" int, "errorCode" text, error text, "responseSnippet" text)
        WHERE i.attempt IS NOT NULL
        RETURNING endpoint_id, started_at, outcome
      ), health AS (
        INSERT INTO postel.endpoint_health AS h (endpoint_id, bucket_start, attempts, failures)
        SELECT endpoint_id, (started_at / ${HEALTH_BUCKET_MS}::bigint) * ${HEALTH_BUCKET_MS}::bigint,
          count(*), count(*) FILTER (WHERE outcome <> 'success')
        FROM recorded_attempts
        GROUP BY 1, 2
        ON CONFLICT (endpoint_id, bucket_start) DO UPDATE
          SET attempts = h.attempts + excluded.attempts, failures = h.failures + excluded.failures
      ), ${finaliseMessages(tx, now)}
      SELECT id FROM changed`,
  ]);
  const recorded = new Set((rows ?? []).map((row) => row["id"] as string));
  return {
    recorded: ids.filter((id) => recorded.has(id)),
    leaseLost: ids.filter((id) => !recorded.has(id)),
  };
}
