/** One batch of `pruneFinished`: which part of the history to look at. */
export interface PruneRequest {
  /** Delete finished messages whose `finishedAt` is before this time (epoch ms). */
  finishedBefore: number;
  /** Examine messages with ids after this one (exclusive); `""` starts at the oldest. */
  after: string;
  /**
   * ...and below this one (exclusive): `messageIdBound(finishedBefore)`. Ids sort by creation time and a
   * message finishes after it is created, so every message finished before `finishedBefore` lies below
   * it, and a batch walks the primary key instead of needing an index on `finishedAt`.
   */
  below: string;
  /** Examine at most this many messages, in id order. */
  limit: number;
}

/** What one `pruneFinished` batch deleted, and where the next batch starts. */
export interface PruneBatch {
  messages: number;
  deliveries: number;
  /** Attempt records deleted (every attempt of the deleted deliveries). */
  attempts: number;
  /** The `after` of the next batch (the last id examined), or null when no message is left in range. */
  next: string | null;
}

/** One batch of `pruneHealth`. */
export interface HealthPruneRequest {
  /** Delete buckets whose start is before this time (epoch ms). */
  startedBefore: number;
  /** Delete at most this many buckets. */
  limit: number;
}

/**
 * Retention (an optional capability, `Storage.retention`): delete old finished history in small
 * batches. `postel.outbound.prune()` and the workers' `outbound.retention` need it.
 */
export interface RetentionStore {
  /**
   * Examine the next `limit` messages of the range (`after` < id < `below`, in id order) and delete,
   * in one short transaction, each one that is finished (`dispatched`, `dead-lettered` or `expired`)
   * with `finishedAt < finishedBefore` and no delivery in a non-terminal status, together with all its
   * deliveries and attempts: never part of a message. Messages another transaction holds (a replay,
   * a worker) are skipped, never waited for (`FOR UPDATE SKIP LOCKED`); claims are never blocked.
   */
  pruneFinished(request: PruneRequest): Promise<PruneBatch>;
  /**
   * Delete at most `limit` endpoint health buckets (the attempt and failure counters behind `stats()`,
   * `endpointHealth` and the dashboard's health chart) that started before `startedBefore`, of any
   * endpoint, deleted ones included; returns how many went. Called after `pruneFinished` until it
   * returns less than `limit`, so the counters are kept exactly as long as the history they count.
   */
  pruneHealth(request: HealthPruneRequest): Promise<number>;
}
