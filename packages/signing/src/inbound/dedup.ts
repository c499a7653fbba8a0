/** Identifies one received webhook: the source it came through and its id (`webhook-id`). */
export interface DedupKey {
  source: string;
  id: string;
}

/** The verdict of `DedupStore.claim`. */
export type ClaimResult = "claimed" | "duplicate" | "in-flight";

/**
 * Where the receiver remembers `webhook-id`s so an at-least-once sender's retry does not run the
 * handler twice. Implementations: `InMemoryDedupStore` (here), and the Postgres and SQLite storages.
 */
export interface DedupStore {
  /**
   * Atomically: if no live record exists for `key` (none, or its `expiresAt <= now`), create one in
   * state "processing" that expires at `processingUntil` and return "claimed"; otherwise "duplicate"
   * when the live record is "done", "in-flight" when it is still "processing". Of N concurrent claims
   * of one key, exactly one gets "claimed".
   */
  claim(key: DedupKey, now: number, processingUntil: number): Promise<ClaimResult>;
  /** The handler finished: mark the record "done" until `expiresAt`. */
  complete(key: DedupKey, now: number, expiresAt: number): Promise<void>;
  /** The handler failed: forget the record so the sender's retry is processed. */
  release(key: DedupKey): Promise<void>;
}

/** A `DedupStore` in process memory: one process, lost on restart. Expired records are swept on use. */
export function InMemoryDedupStore(): DedupStore {
  const records = new Map<string, { state: "processing" | "done"; expiresAt: number }>();
  const keyOf = (key: DedupKey) => `${key.source}\u0000${key.id}`;
  let sweptAt = 0;
  const sweep = (now: number) => {
    if (now - sweptAt < SWEEP_INTERVAL_MS) return;
    sweptAt = now;
    for (const [k, record] of records) if (record.expiresAt <= now) records.delete(k);
  };
  return {
    async claim(key, now, processingUntil) {
      sweep(now);
      const existing = records.get(keyOf(key));
      if (existing && existing.expiresAt > now) return existing.state === "done" ? "duplicate" : "in-flight";
      records.set(keyOf(key), { state: "processing", expiresAt: processingUntil });
      return "claimed";
    },
    async complete(key, _now, expiresAt) {
      records.set(keyOf(key), { state: "done", expiresAt });
    },
    async release(key) {
      records.delete(keyOf(key));
    },
  };
}

/** How often a store sweeps expired records, at most (by the gate's clock). */
export const SWEEP_INTERVAL_MS = 60_000;

/**
 * Keeps a database `DedupStore` from growing forever: `maybeSweep(now)` (call it on every claim)
 * starts, at most once a minute (by `now`) and never twice at once, a background sweep that
 * calls `deleteExpired(now, batch)` (delete at most `batch` records with `expiresAt <= now`, return
 * how many) until a call deletes fewer than `batch`, or after `maxBatches`. A failed sweep is
 * dropped (a claim never fails for it) and the next one tries again. `settled()` waits for a sweep
 * in progress (await it before closing the connection).
 * @example
 * const sweeper = expirySweeper((now, batch) => deleteExpiredRows(now, batch));
 * // in claim(key, now, until): sweeper.maybeSweep(now);
 */
export function expirySweeper(
  deleteExpired: (now: number, batch: number) => Promise<number>,
  options: { batch?: number; maxBatches?: number } = {},
): { maybeSweep(now: number): void; settled(): Promise<void> } {
  const { batch = 1000, maxBatches = 100 } = options;
  let sweptAt = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | null = null;
  const sweep = async (now: number) => {
    for (let round = 0; round < maxBatches; round++) if ((await deleteExpired(now, batch)) < batch) return;
  };
  return {
    maybeSweep(now) {
      if (running !== null || now - sweptAt < SWEEP_INTERVAL_MS) return;
      sweptAt = now;
      running = sweep(now)
        .catch(() => undefined)
        .finally(() => {
          running = null;
        });
    },
    settled: () => running ?? Promise.resolve(),
  };
}
