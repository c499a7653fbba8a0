import type { Clock } from "../clock.js";
import { StorageTimeoutError } from "../errors.js";
import type { Storage } from "../storage/storage.js";

// Not the workers' calls (sends and lifecycle have callers of their own to answer to), or calls that
// legitimately outlast a lease (a migration waits for another process's lock).
const UNBOUNDED = new Set<PropertyKey>(["migrate", "subscribe", "reset", "close", "enqueue", "enqueueMany"]);

/**
 * The storage as the workers see it: every call settles within `deadlineMs` of the clock, or fails
 * with `StorageTimeoutError`, after which `onMissed` runs (the workers reset the storage's
 * connections there). A call that never settles (a connection cut mid-query, a driver that loses
 * track of a query after a failover) would otherwise freeze the worker that awaits it, silently.
 */
export function withDeadline<S extends Storage<unknown>>(
  storage: S,
  clock: Clock,
  deadlineMs: number,
  onMissed: (verb: string) => void,
): S {
  const bounded = new Map<PropertyKey, (...args: unknown[]) => Promise<unknown>>();
  return new Proxy(storage, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || UNBOUNDED.has(key)) return value;
      let call = bounded.get(key);
      if (!call) {
        const verb = String(key);
        call = (...args) =>
          settleWithin(Promise.resolve(value.apply(target, args)), clock, deadlineMs, () => {
            onMissed(verb);
            return new StorageTimeoutError(
              `The ${target.name} storage's ${verb}() did not settle within ${deadlineMs} ms (half the ` +
                "workers' lease), so its connection is presumed lost: Postel dropped the connections it " +
                "owns and retries on new ones. If this repeats, check the database's health and the network to it.",
            );
          });
        bounded.set(key, call);
      }
      return call;
    },
  });
}

function settleWithin<T>(promise: Promise<T>, clock: Clock, ms: number, missed: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimer(() => reject(missed()), ms);
    promise.then(
      (value) => {
        timer.cancel();
        resolve(value);
      },
      (error: unknown) => {
        timer.cancel();
        reject(error);
      },
    );
  });
}
