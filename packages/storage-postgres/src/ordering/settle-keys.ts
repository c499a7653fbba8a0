import type { PendingQuery, Row, Sql } from "postgres";
import { leaseToken } from "../internal/lease-tokens.js";
import { asJson, DELIVERY_COLUMNS, PREFIXED_MESSAGE_COLUMNS, type RawRow } from "../internal/rows.js";

/** Where a settle leases the head it lets go: to this worker, when it is one of `leasable`. */
export interface SettleLease {
  owner: string;
  until: number;
  /** Deliveries the caller may take at once (created by its fan-out, not queued). */
  leasable: readonly string[];
}

/**
 * `ORDERING_RULES.nextOnEnd`, `skip` and `headAtFanout`: for each (endpoint, key) pair that `pairs`
 * selects (columns `endpoint_id`, `ordering_key`) with no `pending` or `held` delivery and no hold,
 * the earliest `waiting` delivery (by message id, then id) becomes `pending`, due `now`, or leased to
 * `lease.owner` when it is one of `lease.leasable`; the leased ones come back with their message.
 *
 * Its own statement, after the writes it settles: a data-modifying CTE's rows are invisible to the
 * other CTEs of its statement. Run it holding the pairs' key locks (`lockKeys`): between its check and
 * its write, no other transaction then makes a head of those keys. Every lookup is an index condition
 * of `deliveries_key_open_idx` or the primary key of `held_keys`.
 */
export function settleKeysStatement(
  sql: Sql,
  pairs: PendingQuery<Row[]>,
  now: number,
  lease?: SettleLease,
): PendingQuery<RawRow[]> {
  return sql<RawRow[]>`
    WITH pairs AS (${pairs}), next AS (
      SELECT w.id FROM (SELECT DISTINCT endpoint_id, ordering_key FROM pairs) p
      CROSS JOIN LATERAL (
        SELECT d.id FROM postel.deliveries d
        WHERE d.endpoint_id = p.endpoint_id AND d.ordering_key = p.ordering_key AND d.status = 'waiting'
        ORDER BY d.message_id, d.id
        LIMIT 1
      ) w
      WHERE NOT EXISTS (
          SELECT 1 FROM postel.deliveries h
          WHERE h.endpoint_id = p.endpoint_id AND h.ordering_key = p.ordering_key AND h.status IN ('pending', 'held')
        )
        AND NOT EXISTS (
          SELECT 1 FROM postel.held_keys k WHERE k.endpoint_id = p.endpoint_id AND k.ordering_key = p.ordering_key
        )
    ), promoted AS (
      UPDATE postel.deliveries d SET
        status = 'pending',
        next_attempt_at = CASE WHEN d.id = ANY(${lease?.leasable ?? []}::text[]) THEN ${lease?.until ?? now}::bigint
          ELSE ${now}::bigint END,
        lease_token = CASE WHEN d.id = ANY(${lease?.leasable ?? []}::text[]) THEN ${sql.unsafe(leaseToken("d.id"))} END,
        lease_owner = CASE WHEN d.id = ANY(${lease?.leasable ?? []}::text[]) THEN ${lease?.owner ?? null}::text END,
        updated_at = ${now}::bigint
      -- The keys as an array too (see pipelinedTransaction). A waiting row another transaction
      -- cancelled meanwhile (deleteEndpoint) fails the status test and stays as it is.
      FROM next WHERE d.id = next.id AND d.id = ANY(ARRAY(SELECT id FROM next)) AND d.status = 'waiting'
      RETURNING d.*
    )
    SELECT ${sql.unsafe(DELIVERY_COLUMNS)}, ${sql.unsafe(PREFIXED_MESSAGE_COLUMNS)}
    FROM promoted d JOIN postel.messages m ON m.id = d.message_id
    WHERE d.lease_token IS NOT NULL
      AND m.id = ANY(ARRAY(SELECT message_id FROM promoted WHERE lease_token IS NOT NULL))`;
}

/** `pairs` for {@link settleKeysStatement}: the (endpoint, key) pairs of the given deliveries that have a key. */
export function pairsOfDeliveries(sql: Sql, deliveryIds: readonly string[]): PendingQuery<Row[]> {
  return sql`
    SELECT endpoint_id, ordering_key FROM postel.deliveries
    WHERE id = ANY(${deliveryIds as string[]}::text[]) AND ordering_key IS NOT NULL`;
}

/** `pairs` for {@link settleKeysStatement}, given as values. */
export function givenPairs(
  sql: Sql,
  pairs: readonly { endpointId: string; orderingKey: string }[],
): PendingQuery<Row[]> {
  return sql`
    SELECT p."endpointId" AS endpoint_id, p."orderingKey" AS ordering_key
    FROM json_to_recordset(${asJson(pairs)}::text::json) AS p("endpointId" text, "orderingKey" text)`;
}
