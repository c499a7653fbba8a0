import type { HeldKey, HeldKeyQuery, OrderingStore } from "../storage.js";
import { compare, keyOf, type MemoryState } from "./state.js";

/** The `ordering` capability of `InMemoryStorage`. */
export function memoryOrdering(state: MemoryState): OrderingStore {
  return {
    async listHeldKeys(query: HeldKeyQuery): Promise<HeldKey[]> {
      const { endpointId, after, limit, countCap } = query;
      const order = (a: { endpointId: string; orderingKey: string }, b: typeof a) =>
        compare(a.endpointId, b.endpointId) || compare(a.orderingKey, b.orderingKey);
      return [...state.heldKeys.values()]
        .filter((hold) => endpointId === undefined || hold.endpointId === endpointId)
        .filter((hold) => after === undefined || order(hold, after) > 0)
        .sort(order)
        .slice(0, Math.max(0, limit))
        .map((hold) => {
          const head = state.deliveries.get(hold.deliveryId)!;
          const waiting = state.keyWaiting.get(keyOf(hold.endpointId, hold.orderingKey))?.length ?? 0;
          return {
            endpointId: hold.endpointId,
            orderingKey: hold.orderingKey,
            deliveryId: hold.deliveryId,
            messageId: head.messageId,
            status: head.status,
            lastError: head.lastError,
            heldAt: hold.heldAt,
            waiting: countCap === undefined ? waiting : Math.min(waiting, countCap),
          };
        });
    },
    async skipHeldKey(endpointId: string, orderingKey: string, now: number): Promise<string | null> {
      const key = keyOf(endpointId, orderingKey);
      const hold = state.heldKeys.get(key);
      if (hold === undefined) return null;
      state.heldKeys.delete(key);
      state.settleKey(endpointId, orderingKey, now);
      return hold.deliveryId;
    },
    async countWaiting({ endpointId, cap }): Promise<number> {
      let count = 0;
      for (const waiting of state.keyWaiting.values()) {
        if (endpointId === undefined || waiting[0]?.endpointId === endpointId) count += waiting.length;
        if (count >= cap) return cap;
      }
      return count;
    },
  };
}
