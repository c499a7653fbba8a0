import { expect } from "vitest";
import { messageIdBound } from "../../ids.js";
import type { EndpointRecord, NewMessage } from "../../storage/records.js";
import type { DeliveryTransition, PruneBatch, Storage } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import {
  claimAll,
  claimOne,
  countDeliveries,
  createEndpoints,
  fanOut,
  lease,
  newMessage,
  settle,
  T0,
} from "./fixtures.js";

const DAY = 86_400_000;
/** The cutoff of every prune in this group: a day after the history below finished. */
const CUTOFF = T0 + DAY;

/** One batch over the whole range below the cutoff. */
function pruneBatch(storage: Storage<unknown>, limit = 1000, after = ""): Promise<PruneBatch> {
  return storage.retention!.pruneFinished({
    finishedBefore: CUTOFF,
    after,
    below: messageIdBound(CUTOFF),
    limit,
  });
}

/**
 * Runs `pruneFinished` batch after batch over every message below the id bound of `finishedBefore`
 * until the range is exhausted; the totals and the number of batches (exported by `@postel/core/testing`).
 */
export async function pruneAll(
  storage: Storage<unknown>,
  finishedBefore: number,
  limit: number,
): Promise<Omit<PruneBatch, "next"> & { batches: number }> {
  const total = { messages: 0, deliveries: 0, attempts: 0, batches: 0 };
  const below = messageIdBound(finishedBefore);
  for (let after: string | null = ""; after !== null; ) {
    const batch: PruneBatch = await storage.retention!.pruneFinished({ finishedBefore, after, below, limit });
    total.messages += batch.messages;
    total.deliveries += batch.deliveries;
    total.attempts += batch.attempts;
    total.batches += 1;
    after = batch.next;
  }
  return total;
}

/** Messages fanned out to `endpoints` at `now`, each delivery settled with `transition` at `now`. */
async function finished(
  storage: Storage<unknown>,
  endpoints: EndpointRecord[],
  options: { messages?: number | Partial<NewMessage>[]; now?: number; transition?: DeliveryTransition } = {},
): Promise<NewMessage[]> {
  const now = options.now ?? T0;
  const { messages, deliveries } = await fanOut(storage, {
    endpoints,
    messages: options.messages ?? 1,
    now,
  });
  const claimed = await claimAll(storage, now);
  for (const delivery of deliveries)
    await settle(storage, claimed.get(delivery.id)!, options.transition ?? { kind: "succeeded" }, now);
  return messages;
}

async function expectGone(storage: Storage<unknown>, messageId: string): Promise<void> {
  expect(await storage.getMessage(messageId)).toBeNull();
  expect(await storage.listDeliveries(messageId)).toEqual([]);
  expect(await storage.operations!.listAttempts(messageId)).toEqual([]);
}

async function expectKept(storage: Storage<unknown>, messageId: string): Promise<void> {
  expect(await storage.getMessage(messageId)).not.toBeNull();
}

/** `pruneFinished`: retention deletes whole finished messages, in batches, and nothing else. */
export function retentionTests(context: ConformanceContext): void {
  group(context, "retention", (test) => {
    test("deletes an old finished message with all its deliveries and every attempt", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { messages, deliveries } = await fanOut(storage, { endpoints });
      const first = await claimAll(storage, T0);
      // One delivery fails once and succeeds on its retry (two attempts), the other succeeds at once.
      await settle(
        storage,
        first.get(deliveries[0]!.id)!,
        { kind: "retry", nextAttemptAt: T0 + 5_000, retriesUsed: 1 },
        T0,
      );
      await settle(storage, first.get(deliveries[1]!.id)!, { kind: "succeeded" }, T0);
      await settle(
        storage,
        await claimOne(storage, deliveries[0]!.id, T0 + 5_000),
        { kind: "succeeded" },
        T0 + 5_000,
      );
      const id = messages[0]!.id;
      expect((await storage.getMessage(id))?.status).toBe("dispatched");
      expect(await storage.operations!.listAttempts(id)).toHaveLength(3);

      const batch = await pruneBatch(storage);
      expect(batch).toEqual({ messages: 1, deliveries: 2, attempts: 3, next: null });
      await expectGone(storage, id);
    });

    test("deletes dead-lettered and expired messages too once old", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const [dead] = await finished(storage, [endpoint!], { transition: { kind: "dead-lettered" } });
      await storage.enqueue(newMessage({ createdAt: T0, expiresAt: T0 + 1 }));
      const [claim] = await storage.claimFanout(lease(T0 + 2));
      await storage.recordFanout(
        [{ messageId: claim!.message.id, token: claim!.token, deliveries: [], expired: true }],
        T0 + 2,
      );
      expect((await storage.getMessage(claim!.message.id))?.status).toBe("expired");
      expect((await storage.getMessage(dead!.id))?.status).toBe("dead-lettered");

      expect(await pruneBatch(storage)).toEqual({ messages: 2, deliveries: 1, attempts: 1, next: null });
      await expectGone(storage, dead!.id);
      await expectGone(storage, claim!.message.id);
      expect(await storage.operations!.listDeadLetters({ limit: 10 })).toEqual([]);
    });

    test("keeps pending, unfinished, recently finished and replayed messages", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      // Old and finished: the only one to go.
      const [old] = await finished(storage, endpoints);
      // Replayed: finished long ago, then put back in the queue.
      const [replayed] = await finished(storage, endpoints);
      const replayable = await storage.replay!.findReplayable({ messageIds: [replayed!.id] }, 10);
      await storage.replay!.resetDeliveries(
        replayable.map((d) => ({ deliveryId: d.id, webhookId: d.webhookId })),
        T0 + 10,
      );
      // Unfinished: one delivery succeeded, the other is still pending (and leased).
      const { messages: unfinished, deliveries } = await fanOut(storage, { endpoints, now: T0 + 20 });
      const claimed = await claimAll(storage, T0 + 20);
      await settle(storage, claimed.get(deliveries[0]!.id)!, { kind: "succeeded" }, T0 + 20);
      // Finished after the cutoff.
      const [recent] = await finished(storage, endpoints, { now: CUTOFF });
      // Never fanned out.
      const pending = newMessage({ createdAt: T0 });
      await storage.enqueue(pending);

      expect(await pruneAll(storage, CUTOFF, 2)).toMatchObject({ messages: 1, deliveries: 2, attempts: 2 });
      await expectGone(storage, old!.id);
      for (const kept of [replayed!, unfinished[0]!, recent!, pending]) await expectKept(storage, kept.id);
      expect(await storage.listDeliveries(replayed!.id)).toHaveLength(2);
      expect(await storage.operations!.listAttempts(unfinished[0]!.id)).toHaveLength(1);
      expect(await storage.operations!.listAttempts(recent!.id)).toHaveLength(2);
    });

    test("examines at most `limit` messages per batch, in id order, and says where to go on", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const messages = await finished(storage, [endpoint!], { messages: 5 });
      const sorted = messages.map((m) => m.id).sort();

      const first = await pruneBatch(storage, 2);
      expect(first).toEqual({ messages: 2, deliveries: 2, attempts: 2, next: sorted[1] });
      for (const id of sorted.slice(0, 2)) await expectGone(storage, id);
      for (const id of sorted.slice(2)) await expectKept(storage, id);

      const second = await pruneBatch(storage, 2, first.next!);
      expect(second).toMatchObject({ messages: 2, next: sorted[3] });
      const third = await pruneBatch(storage, 2, second.next!);
      expect(third).toEqual({ messages: 1, deliveries: 1, attempts: 1, next: null });
      for (const id of sorted) await expectGone(storage, id);
    });

    test("a batch counts kept messages as examined, so a pass moves past them", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const pending = [newMessage(), newMessage(), newMessage()];
      for (const message of pending) await storage.enqueue(message);
      const first = await pruneBatch(storage, 2);
      expect(first).toEqual({ messages: 0, deliveries: 0, attempts: 0, next: pending[1]!.id });
      // Fan-out claims what is pending; then two finished messages follow in id order.
      const claimedPending = await storage.claimFanout(lease(T0, { limit: 10 }));
      expect(claimedPending).toHaveLength(3);
      const old = await finished(storage, [endpoint!], { messages: 2, now: T0 + 1_000 });
      const rest = await pruneBatch(storage, 10, first.next!);
      expect(rest).toEqual({ messages: 2, deliveries: 2, attempts: 2, next: null });
      for (const message of old) await expectGone(storage, message.id);
      for (const message of pending) await expectKept(storage, message.id);
    });

    test("touches only ids between `after` and `below`", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const bound = messageIdBound(CUTOFF);
      const [low, inside, high] = await finished(storage, [endpoint!], {
        messages: [{ id: "msg_0000000000a" }, { id: "msg_0000000000b" }, { id: `${bound}zzzz` }],
      });
      const batch = await storage.retention!.pruneFinished({
        finishedBefore: CUTOFF,
        after: low!.id,
        below: bound,
        limit: 10,
      });
      expect(batch).toEqual({ messages: 1, deliveries: 1, attempts: 1, next: null });
      await expectGone(storage, inside!.id);
      await expectKept(storage, low!.id);
      await expectKept(storage, high!.id);
    });

    test("pruneHealth deletes every endpoint's health buckets that started before the cutoff, at most `limit` a batch", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      // Per endpoint one attempt in each of three buckets: two old, one at the cutoff.
      for (const now of [T0, T0 + 20_000, CUTOFF]) await finished(storage, endpoints, { now });
      await storage.deleteEndpoint(endpoints[1]!.id, CUTOFF); // a deleted endpoint's counters go too
      for (const endpoint of endpoints)
        expect(await storage.endpointHealth(endpoint.id, 0)).toEqual({ attempts: 3, failures: 0 });

      const request = { startedBefore: CUTOFF, limit: 3 };
      expect(await storage.retention!.pruneHealth(request)).toBe(3);
      expect(await storage.retention!.pruneHealth(request)).toBe(1);
      expect(await storage.retention!.pruneHealth(request)).toBe(0);
      for (const endpoint of endpoints) {
        expect(await storage.endpointHealth(endpoint.id, 0)).toEqual({ attempts: 1, failures: 0 });
        expect(await storage.endpointHealth(endpoint.id, CUTOFF)).toEqual({ attempts: 1, failures: 0 });
      }
    });

    test("is idempotent: a second pass deletes nothing and the rest of the storage works on", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const [old] = await finished(storage, [endpoint!], { messages: [{ idempotencyKey: "order-1" }] });
      expect(await pruneAll(storage, CUTOFF, 10)).toMatchObject({ messages: 1, deliveries: 1, attempts: 1 });
      expect(await pruneAll(storage, CUTOFF, 10)).toMatchObject({ messages: 0, deliveries: 0, attempts: 0 });
      // The pruned message's idempotency key is free again.
      const again = newMessage({ createdAt: CUTOFF, idempotencyKey: "order-1" });
      expect(await storage.enqueue(again)).toEqual({ id: again.id, reused: false });
      expect(again.id).not.toBe(old!.id);
      expect(await countDeliveries(storage)).toEqual({});
    });
  });
}
