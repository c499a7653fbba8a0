import {
  type ClaimedDelivery,
  type DeliveryOutcome,
  type DeliveryTransition,
  HEALTH_BUCKET_MS,
  type LeaseRequest,
  type RecordOutcomesResult,
} from "@postel/core";
import type { Db } from "./internal/database.js";
import { leaseArgs, leaseTokenSql, newLeaseNonce, selectLeased, toClaimed } from "./internal/lease-tokens.js";
import { str } from "./internal/rows.js";
import { finaliseMessages, jsonRows } from "./internal/sql-fragments.js";

/** Outcome columns bound as JSON: `status`, `next`/`retries` (null = keep), error only when `setError`. */
const OUTCOME_KEYS = ["id", "token", "status", "next", "retries", "attempted", "setError", "error"] as const;
const ATTEMPT_KEYS = [
  "fenceId",
  "token",
  "bucket",
  "id",
  "deliveryId",
  "messageId",
  "endpointId",
  "webhookId",
  "attemptNumber",
  "startedAt",
  "latencyMs",
  "outcome",
  "statusCode",
  "errorCode",
  "error",
  "responseSnippet",
] as const;

/** The fence: the delivery is still pending and leased with exactly this token. */
const HELD = (alias: string, id: string, token: string) =>
  `${alias}.id = ${id} AND ${alias}.lease_token = ${token} AND ${alias}.status = 'pending'`;

/** The delivery-queue verbs: claim due work, renew leases, record outcomes, release held work. */
export function deliveryQueue(db: Db) {
  return {
    async claimDue(lease: LeaseRequest): Promise<ClaimedDelivery[]> {
      const nonce = newLeaseNonce();
      // BEGIN IMMEDIATE takes SQLite's single write lock before the SELECT runs, so no other process
      // can claim between choosing the rows and leasing them; the partial index keeps it flat.
      const [, leased] = await db.write([
        {
          sql: `UPDATE postel_deliveries
            SET lease_token = ${leaseTokenSql("next_attempt_at", "id")}, lease_owner = :owner, next_attempt_at = :until, updated_at = :now
            WHERE id IN (
              SELECT id FROM postel_deliveries
              WHERE status = 'pending' AND next_attempt_at <= :now
              ORDER BY next_attempt_at, id LIMIT :limit)`,
          args: { nonce, ...leaseArgs(lease) },
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
      const [renewed] = await db.write([
        {
          sql: `WITH l AS (${jsonRows("leases", ["deliveryId", "leaseToken"])})
            UPDATE postel_deliveries SET next_attempt_at = :until FROM l
            WHERE ${HELD("postel_deliveries", "l.deliveryId", "l.leaseToken")}
            RETURNING postel_deliveries.id`,
          args: { leases: JSON.stringify(leases), until },
        },
      ]);
      const kept = new Set(renewed?.rows.map((row) => str(row, "id")));
      return leases.map((l) => l.deliveryId).filter((id) => !kept.has(id));
    },

    async recordOutcomes(outcomes: DeliveryOutcome[], now: number): Promise<RecordOutcomesResult> {
      if (outcomes.length === 0) return { recorded: [], leaseLost: [] };
      const outcomeRows = JSON.stringify(outcomes.map(outcomeRow));
      const attemptRows = JSON.stringify(
        outcomes.flatMap((o) =>
          o.attempt
            ? [
                {
                  ...o.attempt,
                  fenceId: o.deliveryId,
                  token: o.leaseToken,
                  bucket: Math.floor(o.attempt.startedAt / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS,
                },
              ]
            : [],
        ),
      );
      // One write transaction, four statements whatever the batch size. The attempt and health
      // inserts check the fence before the delivery update clears the lease token.
      const [, , updated] = await db.write([
        {
          sql: `INSERT INTO postel_attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
              started_at, latency_ms, outcome, status_code, error_code, error, response_snippet)
            SELECT a.id, a.deliveryId, a.messageId, a.endpointId, a.webhookId, a.attemptNumber, a.startedAt,
              a.latencyMs, a.outcome, a.statusCode, a.errorCode, a.error, a.responseSnippet
            FROM (${jsonRows("attempts", ATTEMPT_KEYS)}) a
            JOIN postel_deliveries d ON ${HELD("d", "a.fenceId", "a.token")}`,
          args: { attempts: attemptRows },
        },
        {
          sql: `INSERT INTO postel_endpoint_health (endpoint_id, bucket_start, attempts, failures)
            SELECT d.endpoint_id, a.bucket, count(*), sum(a.outcome <> 'success')
            FROM (${jsonRows("attempts", ATTEMPT_KEYS)}) a
            JOIN postel_deliveries d ON ${HELD("d", "a.fenceId", "a.token")}
            GROUP BY d.endpoint_id, a.bucket
            ON CONFLICT (endpoint_id, bucket_start) DO UPDATE SET
              attempts = attempts + excluded.attempts, failures = failures + excluded.failures`,
          args: { attempts: attemptRows },
        },
        {
          sql: `WITH o AS (${jsonRows("outcomes", OUTCOME_KEYS)})
            UPDATE postel_deliveries SET
              status = o.status,
              next_attempt_at = coalesce(o.next, next_attempt_at),
              retries_used = coalesce(o.retries, retries_used),
              attempts_made = attempts_made + o.attempted,
              last_error = CASE WHEN o.setError THEN o.error ELSE last_error END,
              lease_token = NULL, lease_owner = NULL, updated_at = :now
            FROM o
            WHERE ${HELD("postel_deliveries", "o.id", "o.token")}
            RETURNING postel_deliveries.id`,
          args: { outcomes: outcomeRows, now },
        },
        finaliseMessages(
          `SELECT message_id FROM postel_deliveries WHERE id IN (SELECT value->>'id' FROM json_each(:outcomes))`,
          { outcomes: outcomeRows, now },
        ),
      ]);
      const recorded = new Set(updated?.rows.map((row) => str(row, "id")));
      const result: RecordOutcomesResult = { recorded: [], leaseLost: [] };
      for (const { deliveryId } of outcomes) {
        (recorded.has(deliveryId) ? result.recorded : result.leaseLost).push(deliveryId);
      }
      return result;
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

/** The columns a transition writes: its new status and, for retry/deferred, when it is due again. */
function outcomeRow(outcome: DeliveryOutcome) {
  const t: DeliveryTransition = outcome.transition;
  const pending = t.kind === "retry" || t.kind === "deferred";
  return {
    id: outcome.deliveryId,
    token: outcome.leaseToken,
    status: pending ? "pending" : t.kind,
    next: pending ? t.nextAttemptAt : null,
    retries: t.kind === "retry" ? t.retriesUsed : null,
    attempted: outcome.attempt ? 1 : 0,
    setError: outcome.lastError === undefined ? 0 : 1,
    error: outcome.lastError ?? null,
  };
}
