import type { PendingQuery, Row, RowList, Sql } from "postgres";
import { begin } from "./begin.js";

const PLAN_SETTINGS =
  "SELECT set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)";

/**
 * Applies the worker's plan settings for the rest of `tx`'s transaction (see
 * {@link pipelinedTransaction}), as a prepared statement: parsed and planned once per connection.
 */
export function planSettings(tx: Pick<Sql, "unsafe">): PendingQuery<Row[]> {
  return tx.unsafe(PLAN_SETTINGS, [], { prepare: true });
}

/**
 * Runs `BEGIN`, then `statements` without waiting between them, then `COMMIT`, in one transaction on
 * one connection (postgres.js's `sql.begin`, through {@link begin}): three round trips whatever the
 * number of statements. If a statement fails, the server aborts the transaction, the rest fail with
 * 25P02, postgres.js rolls back and the first error is thrown. Each statement still gets its own
 * snapshot (READ COMMITTED), so a later statement sees the rows an earlier `SELECT ... FOR UPDATE`
 * waited for.
 *
 * Not `sql.reserve()` with BEGIN and COMMIT in the pipeline (one round trip): postgres.js 3.4.9's
 * `reserve()` never settles when it has to open the connection it reserves and `fetch_types` is off
 * (porsager/postgres#751, #1219): the connection's first ReadyForQuery returns before it hands the
 * connection to the reserve. Postel's own pool turns `fetch_types` off once it knows the types (see
 * query-pool.ts), so after every failover the first claim or outcome on the new pool hung until some
 * other query (a lease renewal, up to 30 s later) freed a connection: issue 24's test on a loaded CI
 * machine. `begin` opens its connection with an ordinary query, which settles.
 *
 * The statements are keyed batch writes (a few dozen rows found by primary key or a selective index)
 * and run with generic plans (`plan_cache_mode = force_generic_plan`): postgres.js prepares them, and
 * planning the outcome statement afresh at every batch costs more CPU than running it (drain, issue
 * 25: 140 against 80 ms of PostgreSQL CPU per 1,000 deliveries). A generic plan is made once per
 * connection, with the statistics of that moment, and kept: so every statement reaches every table
 * through an index condition holding the batch's own keys, given as an array (`id = ANY(ARRAY(...))`
 * beside the join condition), never through a join alone. A join alone, planned while the table was
 * empty (the deliveries of a fresh install, or just after a VACUUM ANALYZE of an empty table), was
 * planned as a full index scan of the table for every batch, kept as the table grew: PostgreSQL's CPU
 * per delivery doubled on a 20,000-message drain (issue 25). Bounded by its keys, any join method is
 * cheap, so hash joins are allowed; sequential scans are not (`enable_seqscan = off`), in case a
 * statement ever lacks its keys (test/plans.test.ts checks them all).
 */
export async function pipelinedTransaction(
  sql: Sql,
  statements: (tx: Sql) => PendingQuery<Row[]>[],
): Promise<RowList<Row[]>[]> {
  const results = await begin(sql, (tx) =>
    Promise.all([
      planSettings(tx),
      // The statement builders take a pool (tests EXPLAIN them on one); the transaction's tagged
      // template, unsafe() and helpers are the same.
      ...statements(tx as unknown as Sql),
    ]),
  );
  return (results as RowList<Row[]>[]).slice(1);
}
