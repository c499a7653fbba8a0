import type { DeliveryRecord, DeliveryStatus } from "../records.js";
import { REPLAYABLE_DELIVERY_STATUSES } from "../rules.js";
import type { DeliveryReset, ReplaySelector } from "../storage.js";
import { compare, copy, keyOf, type MemoryState } from "./state.js";

/** Statuses replay may reset; `cancelled` is excluded because its endpoint was deleted. */
const REPLAYABLE = new Set<DeliveryStatus>(REPLAYABLE_DELIVERY_STATUSES);

/** Replay verbs of `InMemoryStorage`. */
export class MemoryReplay {
  readonly #state: MemoryState;

  constructor(state: MemoryState) {
    this.#state = state;
  }

  /** Oldest delivery first (by id), capped at `limit`. */
  async findReplayable(selector: ReplaySelector, limit: number): Promise<DeliveryRecord[]> {
    const matches: DeliveryRecord[] = [];
    if ("messageIds" in selector) {
      for (const messageId of new Set(selector.messageIds)) {
        for (const id of this.#state.deliveryIdsByMessage.get(messageId) ?? []) {
          const delivery = this.#state.deliveries.get(id)!;
          if (selector.endpointId === undefined || delivery.endpointId === selector.endpointId) {
            matches.push(delivery);
          }
        }
      }
    } else {
      for (const delivery of this.#state.deliveries.values()) {
        if (delivery.endpointId !== selector.endpointId) continue;
        const createdAt = this.#state.messages.get(delivery.messageId)!.record.createdAt;
        if (createdAt >= selector.since && createdAt < selector.until) matches.push(delivery);
      }
    }
    return matches
      .filter((delivery) => REPLAYABLE.has(delivery.status))
      .filter((delivery) => selector.statuses === undefined || selector.statuses.includes(delivery.status))
      .sort((a, b) => compare(a.id, b.id))
      .slice(0, Math.max(0, limit))
      .map(copy);
  }

  async resetDeliveries(resets: DeliveryReset[], now: number): Promise<string[]> {
    const reset: string[] = [];
    for (const { deliveryId, webhookId } of resets) {
      const delivery = this.#state.deliveries.get(deliveryId);
      if (!delivery || !REPLAYABLE.has(delivery.status)) continue;
      const key = delivery.orderingKey;
      if (key === undefined) this.#state.setDeliveryStatus(delivery, "pending");
      else {
        // ORDERING_RULES.replayKeepsPlace: back in its key's queue by its message id; a hold it held is released.
        const ref = keyOf(delivery.endpointId, key);
        if (this.#state.heldKeys.get(ref)?.deliveryId === deliveryId) this.#state.heldKeys.delete(ref);
        this.#state.setDeliveryStatus(delivery, "waiting");
      }
      delivery.nextAttemptAt = now;
      delivery.retriesUsed = 0;
      delivery.leaseToken = null;
      delivery.leaseOwner = null;
      delivery.webhookId = webhookId;
      delivery.updatedAt = now;
      const message = this.#state.messages.get(delivery.messageId)!.record;
      message.status = "pending";
      message.finishedAt = null;
      if (key !== undefined) {
        const head = this.#state.settleKey(delivery.endpointId, key, now);
        // A clear message of the key may be in flight to this endpoint: the head waits out its lease.
        const until = this.#state.clearLeaseUntil(key, now);
        if (head !== undefined && until !== undefined) head.nextAttemptAt = until;
      }
      reset.push(deliveryId);
    }
    return reset;
  }
}
