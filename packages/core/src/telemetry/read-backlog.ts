import type { Storage } from "../storage/storage.js";

/** What the backlog gauges report. */
export interface Backlog {
  /** Deliveries waiting to be sent. */
  due: number;
  /** When the oldest of them became due (epoch ms), or null when unknown or there is none. */
  oldestDueAt: number | null;
}

/**
 * Reads the backlog for the gauges: one storage read however many gauges and readers collect.
 *
 * TEMPORARY (issue 17, merge): `postel.outbound.stats()` (backlog.due, backlog.oldestDueAt, …) is
 * built on another branch; rewire this function to it at merge. Until then it uses what `Storage`
 * has: `countDeliveries()`, whose `pending` also counts retries scheduled for later and leased
 * deliveries, and no oldest due time (that gauge stays silent).
 */
export async function readBacklog(storage: Storage<unknown>): Promise<Backlog> {
  const counts = await storage.countDeliveries();
  return { due: counts.pending ?? 0, oldestDueAt: null };
}
