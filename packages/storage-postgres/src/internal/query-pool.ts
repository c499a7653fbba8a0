import type { Sql } from "postgres";
import { asConnectionError, isReadOnlyServer, isSessionLost } from "./connection-errors.js";

/**
 * The postgres.js pool Postel's queries run on. Postel's own pool (from `url`) is replaced as a whole
 * when a session is lost or lands on a standby: a failover or a cut drops every session at once, and
 * postgres.js 3.4 can leave a query pending for good on a connection that closed under it (and keeps a
 * session that answers read-only). The app's own pool is used as it is and never ended.
 */
export interface QueryPool {
  /** The pool the next call runs on. */
  readonly sql: Sql;
  /** Whether Postel opened this pool (and so may replace and end it). */
  readonly owned: boolean;
  /**
   * Runs `call` on the current pool. If that pool is replaced before `call` settles, the call fails
   * with `StorageUnavailableError` at once: whatever postgres.js still holds on its destroyed
   * connections would never settle.
   */
  run<T>(call: (sql: Sql) => Promise<T>): Promise<T>;
  /** Destroys the current pool's connections and opens a new pool for later calls (own pool only). */
  replace(): Promise<void>;
  /** Ends the pool if Postel owns it (waiting up to 5 s for queries in flight). */
  end(): Promise<void>;
}

interface Generation {
  sql: Sql;
  /** Rejecters of the calls running on this pool. */
  calls: Set<(error: unknown) => void>;
}

/** A pool of Postel's own, `first`, remade by `open` when replaced. */
export function ownedPool(first: Sql, open: () => Sql): QueryPool {
  let current: Generation = { sql: first, calls: new Set() };
  let replacing: Promise<void> | null = null;

  const replace = (): Promise<void> => {
    replacing ??= (async () => {
      const old = current;
      current = { sql: open(), calls: new Set() };
      // The calls still running on the old pool fail now, whatever postgres.js makes of them: a lost
      // session's may never settle, and the rest retry on the new pool (writes are fenced by leases,
      // and a send resolves its commit by its id).
      const dropped = asConnectionError(
        Object.assign(new Error("Postel replaced its connections while this call ran"), {
          code: "CONNECTION_DESTROYED",
        }),
        old.sql,
      );
      for (const reject of old.calls) reject(dropped);
      old.calls.clear();
      // Ended, not destroyed at once: postgres.js 3.4 rejects the array-type lookup of a connection
      // destroyed while it is being opened with nobody to catch it (an unhandled rejection). A second
      // is plenty for a healthy session to finish; a dead one is destroyed then.
      await old.sql.end({ timeout: 1 }).catch(() => {});
    })().finally(() => {
      replacing = null;
    });
    return replacing;
  };

  return {
    owned: true,
    get sql() {
      return current.sql;
    },
    run<T>(call: (sql: Sql) => Promise<T>): Promise<T> {
      const generation = current;
      return new Promise<T>((resolve, reject) => {
        generation.calls.add(reject);
        call(generation.sql)
          .then(resolve, (error: unknown) => {
            // Its own error, not the one replace() gives the calls it drops.
            reject(error);
            generation.calls.delete(reject);
            // The first failure of a session on this pool replaces it; later ones (its other calls,
            // dropped with it) must not replace the new pool.
            if (generation === current && (isSessionLost(error) || isReadOnlyServer(error))) void replace();
          })
          .finally(() => generation.calls.delete(reject));
      });
    },
    replace,
    end: async () => {
      await replacing;
      await current.sql.end({ timeout: 5 });
    },
  };
}

/** The app's own pool: used as it is, never replaced or ended by Postel. */
export function sharedPool(sql: Sql): QueryPool {
  return {
    owned: false,
    sql,
    run: (call) => call(sql),
    replace: async () => {},
    end: async () => {},
  };
}
