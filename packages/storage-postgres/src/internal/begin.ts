import type { Sql, TransactionSql } from "postgres";
import { isSessionLost } from "./connection-errors.js";

/**
 * `sql.begin(fn)` that a lost connection cannot turn into a crash. Every transaction of Postel's runs
 * through it.
 *
 * postgres.js 3.4.9 answers a failed `fn` by sending ROLLBACK on the transaction's connection. When
 * `fn` failed because that connection closed (the server ended the session: a failover, a restart,
 * `pg_terminate_backend`), the ROLLBACK is written to the closed connection, and the write throws from
 * a `setImmediate` (`Cannot read properties of null (reading 'write')`): an uncaught exception that
 * ends the process. So a connection loss inside `fn` rejects this call at once, with that error, and
 * `fn`'s own promise is left unsettled: postgres.js never writes the ROLLBACK, and its `begin` settles
 * by itself when it sees the connection close (the server has rolled the transaction back). Any other
 * failure of `fn` rolls back as usual.
 */
export function begin<T>(sql: Sql, fn: (tx: TransactionSql) => Promise<T>): Promise<T> {
  let lost: (error: unknown) => void = () => {};
  const connectionLost = new Promise<never>((_, reject) => {
    lost = reject;
  });
  const transaction = sql.begin(
    (tx) =>
      new Promise<T>((resolve, reject) => {
        fn(tx).then(resolve, (error: unknown) => (isSessionLost(error) ? lost(error) : reject(error)));
      }),
  ) as Promise<T>;
  // Whichever settles second is not awaited by anyone: never an unhandled rejection.
  transaction.catch(() => {});
  connectionLost.catch(() => {});
  return Promise.race([transaction, connectionLost]);
}
