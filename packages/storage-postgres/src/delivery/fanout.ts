import {
  type ClaimedDelivery,
  type ClaimedMessage,
  type FanoutClaim,
  type FanoutResult,
  fanoutMessageStatus,
  type MessageRecord,
  REFUSED_FANOUT_RETRY_MS,
} from "@postel/core/storage";
import type { PendingQuery, Sql } from "postgres";
import {
  DELIVERY_COLUMNS,
  MESSAGE_COLUMNS,
  PREFIXED_MESSAGE_COLUMNS,
  type RawRow,
  asJson,
  epochMs,
  prefixedMessageColumnsOf,
  toJoinedMessage,
  toMessage,
} from "../internal/rows.js";
import type { ClaimFloor, FloorKey } from "../internal/claim-floor.js";
import { pipelinedTransaction } from "../internal/pipelined-transaction.js";
import { CLEAR_PREFIX, LEASE_ONLY, leaseToken, toClaimedDelivery } from "../internal/lease-tokens.js";
import { PER_ROW } from "../internal/sql-fragments.js";
import { keyPair } from "../ordering/key-pair.js";
import { lockKeys } from "../ordering/key-locks.js";

/**
 * One statement: lease the oldest messages not fanned out yet (through the partial index
 * `messages_fanout_due_idx`, from this instance's {@link ClaimFloor} on) whose fan-out lease is free or
 * expired, skipping rows other workers lock; with `newest`, part of the batch comes from the index's
 * newest end instead. It commits without waiting for the WAL flush (see {@link LEASE_ONLY}).
 */
export async function claimFanout(
  sql: Sql,
  lease: FanoutClaim,
  floor: ClaimFloor,
): Promise<ClaimedMessage[]> {
  const [rows = []] = await pipelinedTransaction(sql, (tx) => [
    claimFanoutStatement(tx, lease, floor.from(lease.now)),
  ]);
  const claimed = rows.map((row): ClaimedMessage => {
    const token = row["lease_token"] as string;
    const message = toMessage(row);
    return token.startsWith(CLEAR_PREFIX) ? { message, token, clear: true } : { message, token };
  });
  // A claim from the newest end alone did not scan the oldest end: it says nothing of the floor.
  if (lease.newest?.only === true) return claimed;
  // The floor follows the oldest-first part only: the newest end says nothing about where it stopped.
  const oldest = claimed.filter((_, i) => rows[i]!["newest"] !== true);
  floor.after(
    lease.now,
    oldest.map(({ message }) => ({ at: message.createdAt, id: message.id })),
    lease.limit - (claimed.length - oldest.length),
  );
  return claimed;
}

// Once per statement (uncorrelated: an InitPlan), before the per-row probes they spare: no keyed
// message is fanned out and unfinished anywhere (a drain of messages that all go straight from the
// outbox has none), no key is held anywhere (the usual state). An OR's arguments run in order. Each
// reads the first entry of its index (ORDER BY its column), never the table.
const NONE_OPEN = `(SELECT o.ordering_key FROM postel.messages o WHERE o.ordering_key IS NOT NULL
    AND o.fanned_out_at IS NOT NULL AND o.status = 'pending' ORDER BY o.ordering_key LIMIT 1) IS NULL`;
const NONE_HELD = "(SELECT k.ordering_key FROM postel.held_keys k ORDER BY k.ordering_key LIMIT 1) IS NULL";

/**
 * `ORDERING_RULES.directHead` for the row `m`: keyed, no earlier message of its key awaiting fan-out
 * (messages_unfanned_key_idx), none of its key fanned out and still pending (messages_open_key_idx), and
 * its key held nowhere (held_keys_key_idx). Evaluated only for keyed rows.
 */
const CLEAR = `m.ordering_key IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM postel.messages e WHERE e.ordering_key = m.ordering_key
    AND e.fanned_out_at IS NULL AND e.status = 'pending' AND e.id < m.id)
  AND (${NONE_OPEN} OR NOT EXISTS (SELECT 1 FROM postel.messages o WHERE o.ordering_key = m.ordering_key
    AND o.fanned_out_at IS NOT NULL AND o.status = 'pending' ${PER_ROW}))
  AND (${NONE_HELD} OR NOT EXISTS (SELECT 1 FROM postel.held_keys k WHERE k.ordering_key = m.ordering_key ${PER_ROW}))`;

/** The claim statement itself, scanning from `from` (tests EXPLAIN it). */
export function claimFanoutStatement(sql: Sql, lease: FanoutClaim, from: FloorKey): PendingQuery<RawRow[]> {
  const newest = Math.min(lease.newest?.limit ?? 0, lease.limit);
  const claimable = sql`fanned_out_at IS NULL AND status = 'pending'
    AND (lease_until IS NULL OR lease_until <= ${lease.now}::bigint) AND ${sql.unsafe(LEASE_ONLY)}`;
  const oldest = sql`
    SELECT id, created_at FROM postel.messages
    WHERE ${claimable} AND (created_at, id) >= (${from.at}::bigint, ${from.id}::text)
    ORDER BY created_at, id
    LIMIT ${lease.limit}
    FOR UPDATE SKIP LOCKED`;
  // Every message from the newest end, then the oldest ones up to the limit. Rows locked by `oldest`
  // but not taken are released when the statement commits.
  const fromNewest = (since: number) => sql`
          SELECT id, created_at FROM postel.messages
          WHERE ${claimable} AND created_at >= ${since}::bigint
          ORDER BY created_at DESC, id DESC
          LIMIT ${newest}
          FOR UPDATE SKIP LOCKED`;
  const due =
    newest > 0 && lease.newest?.only === true
      ? sql`due AS (SELECT id, true AS newest FROM (${fromNewest(lease.newest.since)}) n)`
      : newest > 0 && lease.newest !== undefined
        ? sql`oldest AS (${oldest}), newest AS (${fromNewest(lease.newest.since)}
        ), due AS (
          SELECT id, newest FROM (
            SELECT DISTINCT ON (id) id, created_at, newest FROM (
              SELECT id, created_at, false AS newest FROM oldest
              UNION ALL SELECT id, created_at, true FROM newest) picked
            ORDER BY id, newest DESC) p
          ORDER BY newest DESC, created_at, id
          LIMIT ${lease.limit})`
        : sql`due AS (SELECT id, false AS newest FROM (${oldest}) o)`;
  return sql<RawRow[]>`
    WITH ${due}, m AS (
      UPDATE postel.messages m SET
        lease_token = CASE WHEN ${sql.unsafe(CLEAR)} THEN ${CLEAR_PREFIX}::text ELSE '' END || ${sql.unsafe(leaseToken("m.id"))},
        lease_owner = ${lease.owner},
        lease_until = ${lease.until}::bigint
      -- The keys as an array too: the planner then looks them up in the primary key. Joined with
      -- the CTE alone, it planned a hash join over a sequential scan of every message (per claim).
      FROM due WHERE m.id = due.id AND m.id = ANY(ARRAY(SELECT id FROM due))
      RETURNING m.*, due.newest
    )
    SELECT ${sql.unsafe(MESSAGE_COLUMNS)}, m.lease_token, m.newest FROM m ORDER BY m.created_at, m.id`;
}

/**
 * One statement for the whole batch: per message whose token still matches, mark it fanned out
 * (`dispatched` when nothing matched, `expired` when its ttl elapsed) and insert its deliveries —
 * due `now`, or already leased to `lease.owner` until `lease.until` and returned with their message.
 *
 * A batch with an ordering key takes the keyed path: in one transaction, lock its keys
 * (`lockKeys`), then run the statement with its keyed parts (see {@link recordFanoutStatement}): each
 * keyed delivery that is its (endpoint, key) pair's head is inserted pending (leased like the others
 * when not queued), the rest waiting. A batch without keys runs exactly the statement and input it ran
 * before ordering existed.
 */
export async function recordFanout(
  sql: Sql,
  results: FanoutResult[],
  now: number,
  lease: { owner: string; until: number } | undefined,
): Promise<ClaimedDelivery[]> {
  if (results.length === 0) return [];
  const keys = new Set<string>();
  for (const result of results) {
    if (result.orderingKey !== undefined) keys.add(result.orderingKey);
    for (const d of result.deliveries) if (d.orderingKey !== undefined) keys.add(d.orderingKey);
  }
  const input = results.map((result) =>
    keys.size === 0 ? unorderedInput(result, lease !== undefined) : orderedInput(result, lease !== undefined),
  );
  // In a pipelined transaction: its plan settings (no sequential scans, generic plans) and the
  // messages reached through their keys as an array too. Planned alone while the messages table was
  // empty, it read the whole table at every fan-out (test/plans.test.ts).
  if (keys.size === 0) {
    const [rows = []] = await pipelinedTransaction(sql, (tx) => [
      recordFanoutStatement(tx, input, now, lease, false),
    ]);
    return sharingMessages(rows);
  }
  const [, rows = []] = await pipelinedTransaction(sql, (tx) => [
    lockKeys(tx, [...keys]),
    recordFanoutStatement(tx, input, now, lease, true),
  ]);
  return sharingMessages(rows);
}

/** A fan-out result as the statement's unordered input reads it. */
function unorderedInput(result: FanoutResult, leasing: boolean) {
  return {
    message_id: result.messageId,
    token: result.token,
    expired: result.expired === true,
    // The status core gives the message now (expired, or final with no delivery); null: pending.
    status: fanoutMessageStatus(result),
    // Written out, not `{ ...d, createdAt }`: a spread plus a field costs microseconds per delivery in V8.
    deliveries: result.deliveries.map((d) => ({
      id: d.id,
      endpointId: d.endpointId,
      webhookId: d.webhookId,
      createdAt: epochMs(d.createdAt),
      leased: leasing && d.queued !== true,
    })),
  };
}

/** ... and as its keyed input reads it, with each delivery's key. */
function orderedInput(result: FanoutResult, leasing: boolean) {
  return {
    message_id: result.messageId,
    token: result.token,
    expired: result.expired === true,
    status: fanoutMessageStatus(result),
    ordering_key: result.orderingKey ?? null,
    deliveries: result.deliveries.map((d) => ({
      id: d.id,
      endpointId: d.endpointId,
      webhookId: d.webhookId,
      createdAt: epochMs(d.createdAt),
      leased: leasing && d.queued !== true,
      orderingKey: d.orderingKey ?? null,
    })),
  };
}

/**
 * The fan-out statement. With `keyed` (its transaction holds the batch's key locks),
 * `ORDERING_RULES.fanoutInOrder`: a keyed message with an earlier message of its key still awaiting
 * fan-out, other than this batch's own (token matching), is `refused` — nothing written, claimable
 * again after `REFUSED_FANOUT_RETRY_MS` — and a keyed delivery is inserted with its key, `pending` when
 * it is its pair's head (`ORDERING_RULES.headAtFanout`), else `waiting`.
 */
export function recordFanoutStatement(
  sql: Sql,
  input: unknown[],
  now: number,
  lease: { owner: string; until: number } | undefined,
  keyed: boolean,
): PendingQuery<RawRow[]> {
  const leased = lease !== undefined;
  const recordset = sql`json_to_recordset(${asJson(input)}::text::json)`;
  // Unordered batches keep their statement as it was: each keyed part is a fragment of its own.
  const inputs = keyed
    ? sql`given AS (
        SELECT * FROM ${recordset}
          AS i(message_id text, token text, expired boolean, status text, ordering_key text, deliveries json)
      ), others AS (
        -- Per key, its earliest message awaiting fan-out that this call does not hold (its lease token
        -- is not one of the call's): one walk of messages_unfanned_key_idx per key, from the key's start,
        -- stopping there — past this call's own messages, never once per message (a 10,000-message key
        -- fanned out a batch at a time would make that quadratic).
        SELECT k.ordering_key, (
          SELECT e.id FROM postel.messages e
          WHERE e.ordering_key = k.ordering_key AND e.fanned_out_at IS NULL AND e.status = 'pending'
            AND (e.lease_token IS NULL OR e.lease_token NOT IN (SELECT token FROM given))
          ORDER BY e.id LIMIT 1
        ) AS first_id
        FROM (SELECT DISTINCT ordering_key FROM given WHERE ordering_key IS NOT NULL) k
      ), input AS (
        -- A keyed message waits when such a message comes before it (in the index's order).
        SELECT g.*, coalesce(f.first_id < g.message_id, false) AS later
        FROM given g LEFT JOIN others f ON f.ordering_key = g.ordering_key
      ), refused AS (
        -- No token (no fence matches it), claimable again after REFUSED_FANOUT_RETRY_MS.
        UPDATE postel.messages m SET lease_token = NULL, lease_owner = NULL,
          lease_until = ${now + REFUSED_FANOUT_RETRY_MS}::bigint
        FROM input i
        WHERE i.later AND m.id = i.message_id AND m.id = ANY(ARRAY(SELECT message_id FROM input WHERE later))
          AND m.lease_token = i.token AND m.fanned_out_at IS NULL
      )`
    : sql`input AS (
        SELECT * FROM ${recordset}
          AS i(message_id text, token text, expired boolean, status text, deliveries json)
      )`;
  const insert = keyed
    ? sql`
      INSERT INTO postel.deliveries AS d (id, message_id, endpoint_id, webhook_id, status, retries_used,
        attempts_made, next_attempt_at, lease_token, lease_owner, created_at, updated_at, ordering_key)
      SELECT n.id, n.m_id, n."endpointId", n."webhookId",
        CASE WHEN n.head THEN 'pending' ELSE 'waiting' END, 0, 0,
        CASE WHEN n.head AND n.leased THEN ${leased ? lease.until : now}::bigint ELSE ${now}::bigint END,
        CASE WHEN n.head AND n.leased THEN ${sql.unsafe(leaseToken("n.id"))} END,
        CASE WHEN n.head AND n.leased THEN ${lease?.owner ?? null}::text END, n."createdAt", ${now}::bigint,
        n."orderingKey"
      FROM (
        -- ORDERING_RULES.headAtFanout, decided here under the key locks: a keyed delivery is its pair's
        -- head when it is the pair's earliest in this batch, and the pair has no open delivery (the
        -- committed ones: this statement's own inserts are not visible to it) and no hold.
        SELECT n.*, f.m_id, n."orderingKey" IS NULL OR (
          row_number() OVER (PARTITION BY n."endpointId", n."orderingKey" ORDER BY f.m_id) = 1
          AND NOT EXISTS (
            SELECT 1 FROM postel.deliveries o
            WHERE ${sql.unsafe(keyPair("o"))} = ((n."endpointId" || ' ' || n."orderingKey") COLLATE "C")
              AND o.ordering_key IS NOT NULL AND o.status IN ('pending', 'held', 'waiting') ${sql.unsafe(PER_ROW)})
          AND NOT EXISTS (
            SELECT 1 FROM postel.held_keys k
            WHERE k.endpoint_id = n."endpointId" AND k.ordering_key = n."orderingKey" ${sql.unsafe(PER_ROW)})
        ) AS head
        FROM fenced f
        CROSS JOIN LATERAL json_to_recordset(f.deliveries)
          AS n(id text, "endpointId" text, "webhookId" text, "createdAt" bigint, leased boolean, "orderingKey" text)
        WHERE NOT f.expired
      ) n`
    : sql`
      INSERT INTO postel.deliveries AS d (id, message_id, endpoint_id, webhook_id, status, retries_used,
        attempts_made, next_attempt_at, lease_token, lease_owner, created_at, updated_at)
      SELECT n.id, f.m_id, n."endpointId", n."webhookId", 'pending', 0, 0,
        CASE WHEN n.leased THEN ${leased ? lease.until : now}::bigint ELSE ${now}::bigint END,
        CASE WHEN n.leased THEN ${sql.unsafe(leaseToken("n.id"))} END,
        CASE WHEN n.leased THEN ${lease?.owner ?? null}::text END, n."createdAt", ${now}::bigint
      FROM fenced f
      CROSS JOIN LATERAL json_to_recordset(f.deliveries)
        AS n(id text, "endpointId" text, "webhookId" text, "createdAt" bigint, leased boolean)
      WHERE NOT f.expired`;
  return sql<RawRow[]>`
    WITH ${inputs}, fenced AS (
      UPDATE postel.messages m SET
        fanned_out_at = ${now}::bigint, lease_token = NULL, lease_owner = NULL, lease_until = NULL,
        status = coalesce(i.status, m.status),
        finished_at = CASE WHEN i.status IS NULL THEN m.finished_at ELSE ${now}::bigint END
      FROM input i
      WHERE m.id = i.message_id AND m.id = ANY(ARRAY(SELECT message_id FROM input))
        AND m.lease_token = i.token AND m.fanned_out_at IS NULL${keyed ? sql` AND NOT i.later` : sql``}
      RETURNING ${sql.unsafe(PREFIXED_MESSAGE_COLUMNS)}, i.expired, i.deliveries
    ), d AS (${insert}
      RETURNING d.*
    )
    SELECT ${sql.unsafe(DELIVERY_COLUMNS)}, ${sql.unsafe(prefixedMessageColumnsOf("f", ["payload"]))},
      -- The payload once per message, not once per delivery: a fan-out to N endpoints would otherwise
      -- send it back N times.
      CASE WHEN row_number() OVER (PARTITION BY d.message_id ORDER BY d.id) = 1 THEN f.m_payload END AS m_payload
    FROM d JOIN fenced f ON f.m_id = d.message_id
    WHERE d.lease_token IS NOT NULL`;
}

/** Claimed deliveries from rows where only one row per message carries the payload; they share its record. */
function sharingMessages(rows: RawRow[]): ClaimedDelivery[] {
  const messages = new Map<string, MessageRecord>();
  for (const row of rows) {
    if (row["m_payload"] !== null) messages.set(row["m_id"] as string, toJoinedMessage(row));
  }
  return rows.map((row) => {
    const message = messages.get(row["message_id"] as string);
    if (message === undefined) throw new Error(`recordFanout: no row carried message ${row["message_id"]}`);
    return toClaimedDelivery(row, message);
  });
}

/** Extends the fan-out leases still held (token matches, not fanned out); returns the message ids whose lease was lost. */
export async function renewFanoutLeases(
  sql: Sql,
  leases: { messageId: string; token: string }[],
  until: number,
): Promise<string[]> {
  if (leases.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${asJson(leases)}::text::json) AS i("messageId" text, token text)
    ), renewed AS (
      UPDATE postel.messages m SET lease_until = ${until}::bigint
      FROM input i WHERE m.id = i."messageId" AND m.lease_token = i.token AND m.fanned_out_at IS NULL
        AND m.id = ANY(ARRAY(SELECT "messageId" FROM input))
      RETURNING m.id
    )
    SELECT i."messageId" AS id FROM input i WHERE i."messageId" NOT IN (SELECT id FROM renewed)`;
  return rows.map((row) => row.id);
}
