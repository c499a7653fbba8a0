import type { StorageCapabilities } from "../storage/storage.js";

/** What the backlog gauges report. */
export interface Backlog {
  /** Deliveries due now and not leased (an expired lease is due). */
  due: number;
  /** When the oldest of them became due (epoch ms), or null when none is due. */
  oldestDueAt: number | null;
}

/**
 * Reads the backlog for the gauges from the storage's `stats` (the same read `postel.outbound.stats()`
 * makes, with an empty health window): live work and partial indexes only, never the history.
 */
export async function readBacklog(
  storage: Pick<StorageCapabilities<unknown>, "operations">,
  now: number,
): Promise<Backlog | null> {
  if (storage.operations === undefined) return null;
  const { totals } = await storage.operations.stats({ now, since: now });
  return { due: totals.due, oldestDueAt: totals.oldestDueAt };
}
