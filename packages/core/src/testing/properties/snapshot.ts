import { isDeepStrictEqual } from "node:util";
import type { Storage } from "../../storage/storage.js";
import { countDeliveries } from "../conformance/fixtures.js";

/** Everything a storage holds, as far as its reads and the wiring's table dump can see. */
export interface StorageSnapshot {
  /** What the `Storage` interface reads: endpoints with secrets, messages, deliveries, attempts. */
  reads: Record<string, unknown>;
  /** The wiring's dump of every row of every table, or null when it gave none. */
  tables: Record<string, unknown> | null;
}

/**
 * Reads everything through the `Storage` interface (enough for `InMemoryStorage`), plus every row
 * of every table when the wiring can dump them (deleted endpoints, secrets, health, dedup records).
 */
export async function snapshotStorage(
  storage: Storage<unknown>,
  tables: (() => Promise<Record<string, unknown>>) | undefined,
): Promise<StorageSnapshot> {
  const [endpoints, revision, messages, counts] = await Promise.all([
    storage.allEndpoints(),
    storage.endpointsRevision(),
    storage.operations!.listMessages({ limit: 1_000 }),
    countDeliveries(storage),
  ]);
  const trail = await Promise.all(
    messages.map(async (message) => ({
      deliveries: await storage.listDeliveries(message.id),
      attempts: await storage.operations!.listAttempts(message.id),
    })),
  );
  return {
    reads: { endpoints, revision, messages, counts, trail },
    tables: tables ? await tables() : null,
  };
}

/** The parts (`reads.messages`, `tables.postel.endpoints`, ...) that differ between two snapshots. */
export function changedParts(before: StorageSnapshot, after: StorageSnapshot): string[] {
  const changed: string[] = [];
  for (const part of ["reads", "tables"] as const) {
    const a = before[part] ?? {};
    const b = after[part] ?? {};
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!isDeepStrictEqual(a[key], b[key])) changed.push(`${part}.${key}`);
    }
  }
  return changed;
}
