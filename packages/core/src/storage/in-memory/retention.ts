import type { MessageStatus } from "../records.js";
import type { HealthPruneRequest, PruneBatch, PruneRequest } from "../storage.js";
import { FINISHED_MESSAGE_STATUSES, isTerminal } from "../rules.js";
import { compare, type MemoryState } from "./state.js";

const FINISHED = new Set<MessageStatus>(FINISHED_MESSAGE_STATUSES);

/** Retention verbs of `InMemoryStorage`. */
export class MemoryRetention {
  readonly #state: MemoryState;

  constructor(state: MemoryState) {
    this.#state = state;
  }

  /** Runs synchronously, so the batch is atomic: a message goes with all its rows or not at all. */
  async pruneFinished(request: PruneRequest): Promise<PruneBatch> {
    const { after, below, limit, finishedBefore } = request;
    const examined = [...this.#state.messages.keys()]
      .filter((id) => compare(id, after) > 0 && compare(id, below) < 0)
      .sort(compare)
      .slice(0, Math.max(0, limit));
    const batch: PruneBatch = { messages: 0, deliveries: 0, attempts: 0, next: null };
    for (const id of examined) {
      if (!this.#finishedBefore(id, finishedBefore)) continue;
      const removed = this.#remove(id);
      batch.messages += 1;
      batch.deliveries += removed.deliveries;
      batch.attempts += removed.attempts;
    }
    if (examined.length === limit && limit > 0) batch.next = examined[examined.length - 1]!;
    return batch;
  }

  /** The oldest buckets first, so a batch that stops at `limit` leaves the newer ones. */
  pruneHealth(request: HealthPruneRequest): number {
    const old: [Map<number, unknown>, number][] = [];
    for (const buckets of this.#state.health.values())
      for (const start of buckets.keys()) if (start < request.startedBefore) old.push([buckets, start]);
    old.sort((a, b) => a[1] - b[1]);
    const deleted = old.slice(0, Math.max(0, request.limit));
    for (const [buckets, start] of deleted) buckets.delete(start);
    return deleted.length;
  }

  #finishedBefore(id: string, time: number): boolean {
    const { record } = this.#state.messages.get(id)!;
    if (!FINISHED.has(record.status) || record.finishedAt === null || record.finishedAt >= time) return false;
    const deliveries = this.#state.deliveryIdsByMessage.get(id) ?? [];
    if (!deliveries.every((deliveryId) => isTerminal(this.#state.deliveries.get(deliveryId)!.status)))
      return false;
    // ORDERING_RULES.retention: a delivery holding its key stays until it is replayed or skipped.
    for (const hold of this.#state.heldKeys.values()) if (deliveries.includes(hold.deliveryId)) return false;
    return true;
  }

  #remove(id: string): { deliveries: number; attempts: number } {
    const state = this.#state;
    const { record } = state.messages.get(id)!;
    const deliveryIds = state.deliveryIdsByMessage.get(id) ?? [];
    const attempts = state.attemptsByMessage.get(id)?.length ?? 0;
    for (const deliveryId of deliveryIds) state.deliveries.delete(deliveryId);
    state.deliveryIdsByMessage.delete(id);
    state.attemptsByMessage.delete(id);
    if (record.idempotencyKey !== null) state.messageIdByKey.delete(record.idempotencyKey);
    state.messages.delete(id);
    return { deliveries: deliveryIds.length, attempts };
  }
}
