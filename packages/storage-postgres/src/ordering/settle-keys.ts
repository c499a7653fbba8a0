import type { PendingQuery, Row, Sql } from "postgres";
import { keyPair } from "./key-pair.js";
import { asJson } from "../internal/rows.js";

/**
 * `ORDERING_RULES.nextOnEnd`, `skip` and `replayKeepsPlace`: for each (endpoint, key) pair that
 * `pairs` selects (columns `endpoint_id`, `ordering_key`) with no `pending` or `held` delivery and no
 * hold, the earliest `waiting` delivery (by message id) becomes `pending`, due `now`.
 *
 * Its own statement, after the writes it settles: a data-modifying CTE's rows are invisible to the
 * other CTEs of its statement. Run it holding the pairs' key locks (`lockKeys`): between its check and
 * its write, no other transaction then makes a head of those keys. Each pair costs one probe of
 * `deliveries_key_open_idx` and one of `held_keys`' primary key, however long its history.
 */
export function settleKeysStatement(sql: Sql, pairs: PendingQuery<Row[]>, now: number): PendingQuery<Row[]> {
  return sql`
    -- Materialized: inlined, its DISTINCT below made a plan made on empty tables read the pairs'
    -- deliveries in endpoint order, through a whole index, rather than by their keys.
    WITH pairs AS MATERIALIZED (${pairs}), next AS (
      SELECT o.id FROM (SELECT DISTINCT endpoint_id, ordering_key FROM pairs) p
      CROSS JOIN LATERAL (
        -- The pair's first open delivery in deliveries_key_open_idx's own order (its predicate takes
        -- the status test, so the scan is one range, read from its start): its head when it has one
        -- ('held' and 'pending' sort before 'waiting'), else its earliest waiting delivery. A message
        -- has one delivery per endpoint, so message_id alone orders a pair's deliveries.
        SELECT d.id, d.status FROM postel.deliveries d
        WHERE ${sql.unsafe(keyPair("d"))} = ${sql.unsafe(keyPair("p"))}
          AND d.ordering_key IS NOT NULL AND d.status IN ('pending', 'held', 'waiting')
        ORDER BY d.status, d.message_id
        LIMIT 1
      ) o
      WHERE o.status = 'waiting'
        AND NOT EXISTS (
          SELECT 1 FROM postel.held_keys k WHERE k.endpoint_id = p.endpoint_id AND k.ordering_key = p.ordering_key
        )
    )
    UPDATE postel.deliveries d SET status = 'pending', next_attempt_at = ${now}::bigint, updated_at = ${now}::bigint
    -- The keys as an array too (see pipelinedTransaction). A waiting row another transaction
    -- cancelled meanwhile (deleteEndpoint) fails the status test and stays as it is; the test is
    -- no index condition (IS TRUE), or a plan made on empty tables walks an index by status.
    FROM next WHERE d.id = next.id AND d.id = ANY(ARRAY(SELECT id FROM next)) AND (d.status = 'waiting') IS TRUE`;
}

/** `pairs` for {@link settleKeysStatement}: the (endpoint, key) pairs of the given deliveries that have a key. */
export function pairsOfDeliveries(sql: Sql, deliveryIds: readonly string[]): PendingQuery<Row[]> {
  return sql`
    SELECT endpoint_id, ordering_key FROM postel.deliveries
    WHERE id = ANY(ARRAY(SELECT json_array_elements_text(${asJson(deliveryIds)}::text::json)))
      AND ordering_key IS NOT NULL`;
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
