import {
  type AttemptRecord,
  type DeliveryOutcome,
  type DeliveryTransition,
  deliveryStatusOf,
  firstDirectOutcomes,
  onlyDeliveryFinalStatus,
  HEALTH_BUCKET_MS,
  isTerminal,
  type NewDelivery,
  type NextLease,
  type RecordOutcomesResult,
} from "@postel/core/storage";
import type { Db, Statement } from "../internal/database.js";
import { newLeaseNonce, selectLeased, toClaimed } from "../internal/lease-tokens.js";
import { str } from "../internal/rows.js";
import { finaliseMessages, heldFence, jsonArg, jsonRows, unfannedFence } from "../internal/sql-fragments.js";
import { keysOfDeliveries, leaseHeadsOfKeys, settleKeys } from "../ordering/settle-keys.js";

/** An outcome with the delivery row `recordOutcomes` inserts for it (`DeliveryOutcome.newDelivery`). */
type DirectOutcome = DeliveryOutcome & { newDelivery: NewDelivery };

const ORDINARY_KEYS = ["id", "token", "status", "next", "retries", "attempted", "setError", "error"] as const;
const DIRECT_KEYS = [
  "id",
  "token",
  "messageId",
  "endpointId",
  "webhookId",
  "createdAt",
  "status",
  "next",
  "retries",
  "attempted",
  "error",
] as const;
/** A direct outcome's message: its fan-out fence and the final status it gets (null: not final yet). */
const FAN_OUT_KEYS = ["messageId", "token", "final"] as const;
const HOLD_KEYS = ["id", "token"] as const;
/** The attempt's own columns, bound after its outcome's fence (`direct`, `fenceId`, `token`). */
const ATTEMPT_FIELDS = [
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
] as const satisfies readonly (keyof AttemptRecord)[];
const ATTEMPT_KEYS = ["direct", "fenceId", "token", ...ATTEMPT_FIELDS] as const;

/**
 * The condition selecting the rows the previous INSERT of the batch added to a table. New rows get
 * ascending rowids, so one INSERT's rows are the `changes()` highest; reading them back spares a
 * second JSON pass and fence check.
 */
const INSERTED_BY_PREVIOUS =
  "rowid > (SELECT last_insert_rowid() - changes()) AND rowid <= (SELECT last_insert_rowid())";

/**
 * `recordOutcomes` as one write transaction of at most nine statements whatever the batch size (those
 * with nothing to do are left out). Every fence is checked before the statement that clears it: direct
 * deliveries are inserted (so their attempts satisfy the foreign key), attempts recorded and keys held
 * while the message and delivery leases still stand; then ordinary deliveries are updated, the keys of
 * keyed heads that ended let their next delivery go (given `next`, leased to it for outcomes with
 * `leaseNext`, and read back), and direct messages are fanned out.
 */
export async function recordOutcomes(
  db: Db,
  all: DeliveryOutcome[],
  now: number,
  next?: NextLease,
): Promise<RecordOutcomesResult> {
  const outcomes = firstDirectOutcomes(all);
  const direct = outcomes.filter((o): o is DirectOutcome => o.newDelivery !== undefined);
  const ordinary = outcomes.filter((o) => o.newDelivery === undefined);
  const attempts = outcomes.flatMap(attemptRow);
  const directRows = jsonArg(direct.map(directRow), DIRECT_KEYS);
  const ordinaryRows = jsonArg(ordinary.map(ordinaryRow), ORDINARY_KEYS);
  const fanOutRows = jsonArg(direct.map(fanOutRow), FAN_OUT_KEYS);
  // Keyed heads that ended (keyed messages are never direct): with `holdKey` they hold their key.
  const ended = ordinary.filter(
    (o) => o.orderingKey !== undefined && isTerminal(deliveryStatusOf(o.transition)),
  );
  const holds = ended
    .filter((o) => o.holdKey === true)
    .map((o) => ({ id: o.deliveryId, token: o.leaseToken }));
  const batch: Statement[] = [];
  // Where the recorded ids come back: one JSON array for the direct outcomes, a row per ordinary one.
  let directIds = -1;
  let ordinaryIds = -1;
  if (direct.length > 0) directIds = batch.push(insertDirectDeliveries(directRows, now), DIRECT_RECORDED) - 1;
  if (attempts.length > 0) batch.push(...insertAttempts(JSON.stringify(attempts)));
  if (holds.length > 0) batch.push(holdKeys(jsonArg(holds, HOLD_KEYS), now));
  if (ordinary.length > 0) ordinaryIds = batch.push(updateDeliveries(ordinaryRows, now)) - 1;
  const leasing = next === undefined ? [] : ended.filter((o) => o.leaseNext === true);
  let leasedAt = -1;
  if (ended.length > 0) {
    const ids = JSON.stringify(ended.map((o) => o.deliveryId));
    batch.push(settleKeys(keysOfDeliveries("ended"), { ended: ids, now }));
    if (next !== undefined && leasing.length > 0) {
      const nonce = newLeaseNonce();
      const leaseIds = JSON.stringify(leasing.map((o) => o.deliveryId));
      const args = { leasing: leaseIds, nonce, owner: next.owner, until: next.until, now };
      leasedAt = batch.push(leaseHeadsOfKeys(keysOfDeliveries("leasing"), args), selectLeased(nonce)) - 1;
    }
  }
  if (direct.length > 0) batch.push(fanOutDirectMessages(fanOutRows, now));
  if (ordinary.length > 0) batch.push(finaliseOrdinary(ordinaryRows, now));
  if (batch.length === 0) return { recorded: [], leaseLost: [] };
  const results = await db.write(batch);
  const idsRow = results[directIds]?.rows[0];
  const recorded = new Set<string>(idsRow ? (JSON.parse(str(idsRow, "ids")) as string[]) : []);
  for (const row of results[ordinaryIds]?.rows ?? []) recorded.add(str(row, "id"));
  const result: RecordOutcomesResult = { recorded: [], leaseLost: [] };
  for (const { deliveryId } of all) {
    (recorded.has(deliveryId) ? result.recorded : result.leaseLost).push(deliveryId);
  }
  const leased = (results[leasedAt]?.rows ?? []).map(toClaimed);
  // Present whenever it was asked to lease (ORDERING_RULES.leaseNext): every next let go is here.
  if (leasedAt >= 0) result.next = leased;
  return result;
}

/** Insert each direct outcome's delivery, its transition applied, while its message's lease holds. */
function insertDirectDeliveries(directRows: string, now: number): Statement {
  return {
    sql: `INSERT INTO postel_deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used,
        attempts_made, next_attempt_at, lease_token, lease_owner, last_error, created_at, updated_at)
      SELECT o.id, o.messageId, o.endpointId, o.webhookId, o.status, coalesce(o.retries, 0), o.attempted,
        coalesce(o.next, :now), NULL, NULL, o.error, o.createdAt, :now
      FROM (${jsonRows("direct", DIRECT_KEYS)}) o
      JOIN postel_messages m ON ${unfannedFence("m", "o.messageId", "o.token")}`,
    args: { direct: directRows, now },
  };
}

/** The ids of the direct deliveries the previous statement inserted, as one JSON array. */
const DIRECT_RECORDED: Statement = {
  sql: `SELECT json_group_array(id) AS ids FROM postel_deliveries WHERE ${INSERTED_BY_PREVIOUS}`,
};

/**
 * Insert the attempts whose fence still holds (a direct outcome's is its message's fan-out lease),
 * then add exactly those to their endpoint's health bucket (`HEALTH_BUCKET_MS` wide, as in core).
 */
function insertAttempts(attemptRows: string): Statement[] {
  return [
    {
      sql: `INSERT INTO postel_attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
          started_at, latency_ms, outcome, status_code, error_code, error, response_snippet)
        SELECT a.id, a.deliveryId, a.messageId, a.endpointId, a.webhookId, a.attemptNumber, a.startedAt,
          a.latencyMs, a.outcome, a.statusCode, a.errorCode, a.error, a.responseSnippet
        FROM (${jsonRows("attempts", ATTEMPT_KEYS)}) a
        WHERE CASE WHEN a.direct
          THEN EXISTS (SELECT 1 FROM postel_messages m WHERE ${unfannedFence("m", "a.fenceId", "a.token")})
          ELSE EXISTS (SELECT 1 FROM postel_deliveries d WHERE ${heldFence("d", "a.fenceId", "a.token")}) END`,
      args: { attempts: attemptRows },
    },
    {
      sql: `INSERT INTO postel_endpoint_health (endpoint_id, bucket_start, attempts, failures)
        SELECT endpoint_id, CAST(started_at / :bucket AS INTEGER) * :bucket, count(*), sum(outcome <> 'success')
        FROM postel_attempts WHERE ${INSERTED_BY_PREVIOUS}
        GROUP BY 1, 2
        ON CONFLICT (endpoint_id, bucket_start) DO UPDATE SET
          attempts = attempts + excluded.attempts, failures = failures + excluded.failures`,
      args: { bucket: HEALTH_BUCKET_MS },
    },
  ];
}

/**
 * `ORDERING_RULES.nextOnEnd` with `holdKey`: hold each delivery's key on its endpoint, for the outcomes
 * whose lease still holds (checked before `updateDeliveries` clears it). Its waiting deliveries stay.
 */
function holdKeys(holdRows: string, now: number): Statement {
  return {
    sql: `INSERT INTO postel_held_keys (endpoint_id, ordering_key, delivery_id, held_at)
      SELECT d.endpoint_id, d.ordering_key, d.id, :now
      FROM (${jsonRows("holds", HOLD_KEYS)}) o
      JOIN postel_deliveries d ON ${heldFence("d", "o.id", "o.token")}
      WHERE d.ordering_key IS NOT NULL
      ON CONFLICT (endpoint_id, ordering_key) DO UPDATE SET delivery_id = excluded.delivery_id, held_at = excluded.held_at`,
    args: { holds: holdRows, now },
  };
}

/** Apply each ordinary outcome's transition to its delivery while its lease holds (clearing it). */
function updateDeliveries(ordinaryRows: string, now: number): Statement {
  return {
    sql: `WITH o AS (${jsonRows("ordinary", ORDINARY_KEYS)})
      UPDATE postel_deliveries SET
        status = o.status,
        next_attempt_at = coalesce(o.next, next_attempt_at),
        retries_used = coalesce(o.retries, retries_used),
        attempts_made = attempts_made + o.attempted,
        last_error = CASE WHEN o.setError THEN o.error ELSE last_error END,
        lease_token = NULL, lease_owner = NULL, updated_at = :now
      FROM o
      WHERE ${heldFence("postel_deliveries", "o.id", "o.token")}
      RETURNING postel_deliveries.id`,
    args: { ordinary: ordinaryRows, now },
  };
}

/** Mark each direct outcome's message fanned out (clearing its lease) and, when final, finished. */
function fanOutDirectMessages(fanOutRows: string, now: number): Statement {
  return {
    sql: `WITH o AS (${jsonRows("fanOut", FAN_OUT_KEYS)})
      UPDATE postel_messages SET
        fanned_out_at = :now, lease_token = NULL, lease_owner = NULL, lease_until = NULL,
        status = coalesce(o.final, postel_messages.status),
        finished_at = CASE WHEN o.final IS NULL THEN postel_messages.finished_at ELSE :now END
      FROM o
      WHERE ${unfannedFence("postel_messages", "o.messageId", "o.token")}`,
    args: { fanOut: fanOutRows, now },
  };
}

/** Finalise the messages of the ordinary outcomes' deliveries. */
function finaliseOrdinary(ordinaryRows: string, now: number): Statement {
  return finaliseMessages(
    `SELECT message_id FROM postel_deliveries WHERE id IN (SELECT id FROM (${jsonRows("ordinary", ORDINARY_KEYS)}))`,
    { ordinary: ordinaryRows, now },
  );
}

/** The columns a transition writes: the status core gives it and, for retry/deferred, when it is due again. */
function transitionColumns(t: DeliveryTransition) {
  return {
    status: deliveryStatusOf(t),
    next: t.kind === "retry" || t.kind === "deferred" ? t.nextAttemptAt : null,
    retries: t.kind === "retry" ? t.retriesUsed : null,
  };
}

/** An ordinary outcome's row: its fence and transition; the error is written only when `setError`. */
function ordinaryRow(outcome: DeliveryOutcome) {
  const { status, next, retries } = transitionColumns(outcome.transition);
  return {
    id: outcome.deliveryId,
    token: outcome.leaseToken,
    status,
    next,
    retries,
    attempted: outcome.attempt ? 1 : 0,
    setError: outcome.lastError === undefined ? 0 : 1,
    error: outcome.lastError ?? null,
  };
}

/** A direct outcome's row: its message's fence and the new delivery with its transition applied. */
function directRow(outcome: DirectOutcome) {
  const { messageId, endpointId, webhookId, createdAt } = outcome.newDelivery;
  const { status, next, retries } = transitionColumns(outcome.transition);
  return {
    id: outcome.deliveryId,
    token: outcome.leaseToken,
    messageId,
    endpointId,
    webhookId,
    createdAt,
    status,
    next,
    retries,
    attempted: outcome.attempt ? 1 : 0,
    error: outcome.lastError ?? null,
  };
}

/** A direct outcome's message row: its fan-out fence and the status it gets now, if final. */
function fanOutRow({ newDelivery, leaseToken, transition }: DirectOutcome) {
  // Its only delivery: the message's final status is that of this one delivery's, once terminal.
  return {
    messageId: newDelivery.messageId,
    token: leaseToken,
    final: onlyDeliveryFinalStatus(transition),
  };
}

/**
 * An attempt row in `ATTEMPT_KEYS` order (as `jsonArg` would bind it, without copying the attempt
 * first), fenced by the delivery's lease or, for a direct outcome, its message's. None when no HTTP
 * call was made.
 */
function attemptRow({ attempt, newDelivery, deliveryId, leaseToken }: DeliveryOutcome): unknown[][] {
  if (!attempt) return [];
  const fence = newDelivery ? [1, newDelivery.messageId] : [0, deliveryId];
  return [[...fence, leaseToken, ...ATTEMPT_FIELDS.map((field) => attempt[field])]];
}
