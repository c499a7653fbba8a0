import type { PendingQuery, Row, Sql } from "postgres";
import { keyPair } from "./key-pair.js";
import { CLEAR_PREFIX, leaseToken } from "../internal/lease-tokens.js";
import { asJson, PREFIXED_MESSAGE_COLUMNS, type RawRow } from "../internal/rows.js";
import { PER_ROW } from "../internal/sql-fragments.js";

/**
 * `ORDERING_RULES.nextOnEnd`, `skip` and `replayKeepsPlace`: for each (endpoint, key) pair that
 * `pairs` selects (columns `endpoint_id`, `ordering_key`, `lease`) with no `pending` or `held` delivery
 * and no hold, the earliest `waiting` delivery (by message id) becomes `pending`, due `now` — or, for
 * a pair with `lease` and given `lease` (`ORDERING_RULES.leaseNext`), leased to its owner until its
 * `until`. The leased ones come back as claim rows (delivery columns and `m_`-prefixed message ones).
 *
 * Its own statement, after the writes it settles: a data-modifying CTE's rows are invisible to the
 * other CTEs of its statement. Run it holding the pairs' key locks (`lockKeys`): between its check and
 * its write, no other transaction then makes a head of those keys. Each pair costs one probe of
 * `deliveries_key_open_idx` and one of `held_keys`' primary key, however long its history.
 */
export function settleKeysStatement(
  sql: Sql,
  pairs: PendingQuery<Row[]>,
  now: number,
  lease?: { owner: string; until: number },
  awaitClear = false,
): PendingQuery<RawRow[]> {
  // ORDERING_RULES.replayKeepsPlace: after a replay, a head is due only once a clear message of its key
  // leased now (it may be in flight straight from its lease, CLEAR_PREFIX) has had its lease run out.
  const due = awaitClear
    ? sql`GREATEST(${now}::bigint, COALESCE((
        SELECT max(e.lease_until) FROM postel.messages e
        WHERE e.ordering_key = d.ordering_key AND e.fanned_out_at IS NULL AND e.status = 'pending'
          AND e.lease_token LIKE ${`${CLEAR_PREFIX}%`} AND e.lease_until > ${now}::bigint), ${now}::bigint))`
    : sql`${now}::bigint`;
  const leased = (then: PendingQuery<Row[]>, otherwise: PendingQuery<Row[]>) =>
    lease === undefined ? otherwise : sql`CASE WHEN next.lease THEN ${then} ELSE ${otherwise} END`;
  return sql<RawRow[]>`
    -- Materialized: inlined, its grouping below made a plan made on empty tables read the pairs'
    -- deliveries in endpoint order, through a whole index, rather than by their keys.
    WITH pairs AS MATERIALIZED (${pairs}), next AS (
      SELECT o.id, p.lease FROM (
        SELECT endpoint_id, ordering_key, bool_or(lease) AS lease FROM pairs GROUP BY endpoint_id, ordering_key
      ) p
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
          ${sql.unsafe(PER_ROW)}
        )
    ), promoted AS (
      UPDATE postel.deliveries d SET status = 'pending',
        next_attempt_at = ${leased(sql`${lease?.until ?? 0}::bigint`, due)},
        lease_token = ${leased(sql.unsafe(leaseToken("d.id")), sql`NULL`)},
        lease_owner = ${leased(sql`${lease?.owner ?? null}::text`, sql`NULL`)},
        updated_at = ${now}::bigint
      -- The keys as an array too (see pipelinedTransaction). A waiting row another transaction
      -- cancelled meanwhile (deleteEndpoint) fails the status test and stays as it is; the test is
      -- no index condition (IS TRUE), or a plan made on empty tables walks an index by status.
      FROM next WHERE d.id = next.id AND d.id = ANY(ARRAY(SELECT id FROM next)) AND (d.status = 'waiting') IS TRUE
      RETURNING d.*
    )
    SELECT p.*, ${sql.unsafe(PREFIXED_MESSAGE_COLUMNS)}
    FROM promoted p JOIN postel.messages m ON m.id = p.message_id
    WHERE p.lease_token IS NOT NULL
      AND m.id = ANY(ARRAY(SELECT message_id FROM promoted WHERE lease_token IS NOT NULL))`;
}

/**
 * `pairs` for {@link settleKeysStatement}: the (endpoint, key) pairs of the given deliveries that have a
 * key, `lease` for those whose id `leasing` holds.
 */
export function pairsOfDeliveries(
  sql: Sql,
  deliveryIds: readonly string[],
  leasing: ReadonlySet<string> = new Set(),
): PendingQuery<Row[]> {
  return sql`
    SELECT endpoint_id, ordering_key, id = ANY(ARRAY(SELECT json_array_elements_text(${asJson([...leasing])}::text::json))) AS lease
    FROM postel.deliveries
    WHERE id = ANY(ARRAY(SELECT json_array_elements_text(${asJson(deliveryIds)}::text::json)))
      AND ordering_key IS NOT NULL`;
}

/**
 * `pairs` for {@link settleKeysStatement}: those of the deliveries `deliveryIds` names (as
 * {@link pairsOfDeliveries}) and those `given` as values, which cost no lookup: a delivery inserted by
 * the transaction's own statement (a direct outcome) is known by its pair already.
 */
export function pairsOfOutcomes(
  sql: Sql,
  deliveryIds: readonly string[],
  given: readonly { endpoint_id: string; ordering_key: string; lease: boolean }[],
  leasing: ReadonlySet<string>,
): PendingQuery<Row[]> {
  const values = sql`
    SELECT p.endpoint_id, p.ordering_key, p.lease
    FROM json_to_recordset(${asJson(given)}::text::json) AS p(endpoint_id text, ordering_key text, lease boolean)`;
  if (deliveryIds.length === 0) return values;
  if (given.length === 0) return pairsOfDeliveries(sql, deliveryIds, leasing);
  return sql`${pairsOfDeliveries(sql, deliveryIds, leasing)} UNION ALL ${values}`;
}

/** `pairs` for {@link settleKeysStatement}, given as values. */
export function givenPairs(
  sql: Sql,
  pairs: readonly { endpointId: string; orderingKey: string }[],
): PendingQuery<Row[]> {
  return sql`
    SELECT p."endpointId" AS endpoint_id, p."orderingKey" AS ordering_key, false AS lease
    FROM json_to_recordset(${asJson(pairs)}::text::json) AS p("endpointId" text, "orderingKey" text)`;
}
