import type { Clock } from "../clock.js";
import { StorageTimeoutError } from "../errors.js";
import { STORAGE_CAPABILITIES } from "../storage/capabilities.js";
import type { Storage } from "../storage/storage.js";

// Not the workers' calls (sends and lifecycle have callers of their own to answer to), or calls that
// legitimately outlast a lease (a migration waits for another process's lock).
const UNBOUNDED = new Set<PropertyKey>(["migrate", "subscribe", "reset", "close", "enqueue", "enqueueMany"]);
const CAPABILITY_NAMES = new Set<PropertyKey>(STORAGE_CAPABILITIES);

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
  return bounded(storage, storage.name, "", clock, deadlineMs, onMissed);
}

// The storage itself, and each capability object on it (`limits.claimLimited` is a workers' call too).
function bounded<T extends object>(
  target: T,
  name: string,
  prefix: string,
  clock: Clock,
  deadlineMs: number,
  onMissed: (verb: string) => void,
): T {
  const calls = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (UNBOUNDED.has(key)) return value;
      const capability = prefix === "" && (CAPABILITY_NAMES as ReadonlySet<PropertyKey>).has(key);
      if (capability ? typeof value !== "object" || value === null : typeof value !== "function")
        return value;
      let call = calls.get(key);
      if (call === undefined) {
        const verb = `${prefix}${String(key)}`;
        call = capability
          ? bounded(value as object, name, `${verb}.`, clock, deadlineMs, onMissed)
          : (...args: unknown[]) =>
              settleWithin(
                Promise.resolve((value as (...args: unknown[]) => unknown).apply(target, args)),
                clock,
                deadlineMs,
                () => {
                  onMissed(verb);
                  return new StorageTimeoutError(
                    `The ${name} storage's ${verb}() did not settle within ${deadlineMs} ms (half the ` +
                      "workers' lease), so its connection is presumed lost: Postel dropped the connections it " +
                      "owns and retries on new ones. If this repeats, check the database's health and the network to it.",
                  );
                },
              );
        calls.set(key, call);
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
