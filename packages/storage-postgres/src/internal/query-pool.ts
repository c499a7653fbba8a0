import postgres, { type Sql } from "postgres";
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
   * Runs `call` on the current pool. If that pool is replaced and `call` has not settled once the old
   * pool has ended (250 ms after a lost session, 500 ms after a read-only one), it fails with
   * `StorageUnavailableError`: whatever postgres.js still holds on destroyed connections never settles.
   */
  run<T>(call: (sql: Sql) => Promise<T>): Promise<T>;
  /**
   * Opens a new pool for later calls and ends the current one, its calls failing if they have not
   * settled within 250 ms (own pool only). Resolves when the old pool has ended.
   */
  replace(): Promise<void>;
  /** Ends the pool if Postel owns it (waiting up to 5 s for queries in flight). */
  end(): Promise<void>;
}

// How long an old pool's calls get to settle on their own after it was replaced, in seconds.
const LOST_GRACE_S = 0.25;
// Not longer: a call that has not settled holds the workers meanwhile (outcomes waiting to be written
// keep their slots), and CI saw one on a read-only pool do so for its whole grace, 2 s then, right
// as the new primary took writes.
const READ_ONLY_GRACE_S = 0.5;
// A pool replaced after a failure is at least this old (in ms): at most one new pool a second.
const MIN_POOL_LIFE_MS = 1_000;

interface Generation {
  sql: Sql;
  /** When it became the current pool (`performance.now()`). */
  openedAt: number;
  /** Rejecters of the calls running on this pool. */
  calls: Set<(error: unknown) => void>;
}

/** A pool of Postel's own, `first`, remade like it when replaced. */
export function ownedPool(first: Sql): QueryPool {
  let current: Generation = { sql: first, calls: new Set(), openedAt: Number.NEGATIVE_INFINITY };
  let typesKnown = false;
  // postgres.js looks the array types up on every new connection (fetch_types), and a connection
  // lost during that lookup rejects it with nobody to catch it: an unhandled rejection, which ends a
  // Node process. A failover is exactly when connections are lost while opening. Once the pool has
  // the types, its later connections (and the pools that replace it, which share its parsed options
  // and so its types) skip the lookup.
  const learnTypes = (sql: Sql) => {
    const shared = (sql.options as { shared?: { typeArrayMap?: object } }).shared;
    if (shared?.typeArrayMap && Object.keys(shared.typeArrayMap).length > 0) {
      sql.options.fetch_types = false;
      typesKnown = true;
    }
  };
  const open = (like: Sql): Sql =>
    postgres({ ...(like.options as unknown as postgres.Options<Record<string, postgres.PostgresType>>) });
  const ending = new Set<Promise<void>>();

  /**
   * Swaps in a new pool at once and ends the old one within `graceSeconds`: a call already on a
   * healthy session of the old pool (a claim that committed, say) keeps its result rather than
   * leaving its leases to expire. What postgres.js has not settled once it destroyed the old
   * connections never will be, and fails.
   */
  const replace = (graceSeconds: number): Promise<void> => {
    const old = current;
    current = { sql: open(old.sql), calls: new Set(), openedAt: performance.now() };
    const ended = (async () => {
      await old.sql.end({ timeout: graceSeconds }).catch(() => {});
      const dropped = asConnectionError(
        Object.assign(new Error("Postel replaced its connections while this call ran"), {
          code: "CONNECTION_DESTROYED",
        }),
        old.sql,
      );
      for (const reject of old.calls) reject(dropped);
      old.calls.clear();
    })();
    ending.add(ended);
    void ended.finally(() => ending.delete(ended));
    return ended;
  };
  const replaceAfter = (error: unknown) => {
    const lost = isSessionLost(error);
    if (!lost && !isReadOnlyServer(error)) return;
    // Not more than once a second: while a promoted standby still answers read-only (pg_auto_failover
    // keeps it so until the monitor confirms it), every new session does, and a new pool per failure would
    // flood the server with connections (each old pool keeps its own until it has ended). Wall time,
    // not Postel's clock: this paces sockets, not schedules.
    if (performance.now() - current.openedAt < MIN_POOL_LIFE_MS) return;
    // A lost session's calls are on dead connections: a quarter of a second for the healthy ones.
    // A read-only session answers, and so do the calls on it (reads succeed, writes fail at once), and
    // one still connecting may reach the primary: they settle by themselves, if given time.
    void replace(lost ? LOST_GRACE_S : READ_ONLY_GRACE_S);
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
          .then(
            (value) => {
              if (!typesKnown) learnTypes(generation.sql);
              resolve(value);
            },
            (error: unknown) => {
              // Settled with its own error first: the one replace() gives the calls it drops comes later.
              reject(error);
              // The first failure of a session on this pool replaces it; later ones (its other calls,
              // dropped with it) must not replace the new pool.
              if (generation === current) replaceAfter(error);
            },
          )
          .finally(() => generation.calls.delete(reject));
      });
    },
    replace: () => replace(LOST_GRACE_S),
    end: async () => {
      await Promise.all(ending);
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
