import type { DeliveryRecord } from "../records.js";
import type { DeliveryCounts, EndpointStatsRow, StatsQuery, StorageStats } from "../storage.js";
import { compare, type MemoryState } from "./state.js";

/**
 * `stats` of `InMemoryStorage`: the pending and held indexes hold only live work; dead letters are
 * counted by walking the deliveries (InMemoryStorage holds no more history than a process can scan).
 */
export function memoryStats(state: MemoryState, query: StatsQuery): StorageStats {
  return capStats(exactStats(state, query), query.countCap ?? Number.POSITIVE_INFINITY);
}

function exactStats(state: MemoryState, { now, since, endpointId }: StatsQuery): StorageStats {
  const byEndpoint = new Map<string, DeliveryCounts>();
  const totals = { ...zero(), oldestDueAt: null as number | null };
  const counted = (delivery: DeliveryRecord) =>
    endpointId === undefined || delivery.endpointId === endpointId;
  const count = (delivery: DeliveryRecord, key: keyof DeliveryCounts) => {
    if (!counted(delivery)) return;
    const counts = byEndpoint.get(delivery.endpointId) ?? zero();
    byEndpoint.set(delivery.endpointId, counts);
    counts[key] += 1;
    totals[key] += 1;
  };
  for (const id of state.pending) {
    const delivery = state.deliveries.get(id)!;
    if (!counted(delivery)) continue;
    if (delivery.nextAttemptAt <= now) {
      count(delivery, "due");
      totals.oldestDueAt = Math.min(totals.oldestDueAt ?? delivery.nextAttemptAt, delivery.nextAttemptAt);
    } else count(delivery, delivery.leaseToken === null ? "scheduled" : "inFlight");
  }
  for (const held of state.heldByEndpoint.values()) {
    for (const id of held) count(state.deliveries.get(id)!, "held");
  }
  for (const delivery of state.deliveries.values()) {
    if (delivery.status === "dead-lettered") count(delivery, "deadLetters");
    else if (delivery.status === "failed") count(delivery, "failed");
  }
  const endpoints: EndpointStatsRow[] = [];
  for (const { record, deleted } of state.endpoints.values()) {
    if (deleted || (endpointId !== undefined && record.id !== endpointId)) continue;
    endpoints.push({
      id: record.id,
      url: record.url,
      description: record.description,
      state: record.state,
      circuitOpenUntil: record.circuitOpenUntil,
      ...(byEndpoint.get(record.id) ?? zero()),
      ...state.healthSince(record.id, since),
    });
  }
  endpoints.sort((a, b) => compare(a.id, b.id));
  return { totals, unfanned: state.unfanned.size, endpoints };
}

function zero(): DeliveryCounts {
  return { due: 0, inFlight: 0, scheduled: 0, held: 0, deadLetters: 0, failed: 0 };
}

/**
 * The counts a capped storage reports (see `StatsQuery.countCap`): each stops at `cap`, in flight
 * counted before scheduled. The totals are recomputed from the capped lines, as a SQL storage sums
 * its capped per-endpoint counts; here every endpoint is live or its lines were dropped, so the
 * totals of dropped (deleted) endpoints' rows stay as counted, capped alike.
 */
function capStats(stats: StorageStats, cap: number): StorageStats {
  if (cap === Number.POSITIVE_INFINITY) return stats;
  const capCounts = <T extends DeliveryCounts>(c: T): T => {
    const inFlight = Math.min(c.inFlight, cap);
    return {
      ...c,
      due: Math.min(c.due, cap),
      inFlight,
      scheduled: Math.min(c.scheduled, cap - inFlight),
      held: Math.min(c.held, cap),
      deadLetters: Math.min(c.deadLetters, cap),
      failed: Math.min(c.failed, cap),
    };
  };
  return {
    totals: capCounts(stats.totals),
    unfanned: Math.min(stats.unfanned, cap),
    endpoints: stats.endpoints.map(capCounts),
  };
}
