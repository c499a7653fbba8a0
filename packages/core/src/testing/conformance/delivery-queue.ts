import { expect } from "vitest";
import type { ClaimedDelivery } from "../../storage/records.js";
import { type ConformanceContext, group } from "./context.js";
import {
  claimAll,
  claimOne,
  createEndpoints,
  deliveryRow,
  fanOut,
  ids,
  LEASE_MS,
  lease,
  settle,
  T0,
} from "./fixtures.js";

/** `claimDue` and `renewLeases`. */
export function deliveryQueueTests(context: ConformanceContext): void {
  group(context, "claim-due", (test) => {
    test("claimDue returns only pending deliveries whose nextAttemptAt <= now", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 3);
      const { deliveries } = await fanOut(storage, { endpoints });
      const [now, soon, later] = deliveries;
      // Move two deliveries into the future: due exactly at T0 + 10s and at T0 + 20s.
      const claimed = await claimAll(storage, T0);
      await settle(
        storage,
        claimed.get(soon!.id)!,
        { kind: "retry", nextAttemptAt: T0 + 10_000, retriesUsed: 1 },
        T0,
      );
      await settle(
        storage,
        claimed.get(later!.id)!,
        { kind: "retry", nextAttemptAt: T0 + 20_000, retriesUsed: 1 },
        T0,
      );
      await settle(storage, claimed.get(now!.id)!, { kind: "retry", nextAttemptAt: T0, retriesUsed: 1 }, T0);

      expect(ids((await storage.claimDue(lease(T0 + 10_000))).map((c) => c.delivery))).toEqual(
        ids([now!, soon!]),
      );
      expect(await storage.claimDue(lease(T0 + 19_999))).toEqual([]);
    });

    test("claimDue returns the earliest due delivery first", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 3);
      const { deliveries } = await fanOut(storage, { endpoints });
      const claimed = await claimAll(storage, T0);
      const dueAt = [T0 + 30_000, T0 + 10_000, T0 + 20_000];
      for (const [i, delivery] of deliveries.entries()) {
        await settle(
          storage,
          claimed.get(delivery.id)!,
          { kind: "retry", nextAttemptAt: dueAt[i]!, retriesUsed: 1 },
          T0,
        );
      }
      const order = (await storage.claimDue(lease(T0 + 60_000))).map((c) => c.delivery.id);
      expect(order).toEqual([deliveries[1]!.id, deliveries[2]!.id, deliveries[0]!.id]);
    });

    test("claimDue honours `limit`, taking the earliest due", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 5);
      const { deliveries } = await fanOut(storage, { endpoints });
      const claimed = await claimAll(storage, T0);
      for (const [i, delivery] of deliveries.entries()) {
        const next = { kind: "retry", nextAttemptAt: T0 + 1_000 * (5 - i), retriesUsed: 1 } as const;
        await settle(storage, claimed.get(delivery.id)!, next, T0);
      }
      const first = await storage.claimDue(lease(T0 + 10_000, { limit: 2 }));
      expect(first.map((c) => c.delivery.id)).toEqual([deliveries[4]!.id, deliveries[3]!.id]);
      expect(await storage.claimDue(lease(T0 + 10_000, { limit: 10 }))).toHaveLength(3);
    });

    test("claimDue leaves the deliveries of skipEndpoints due and unleased, and takes the others", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 3);
      const { deliveries } = await fanOut(storage, { endpoints, messages: 2 });
      const [busy, full, free] = endpoints.map((e) => e.id);
      const claimed = await storage.claimDue(lease(T0, { skipEndpoints: [busy!, full!] }));
      expect(claimed.map((c) => c.delivery.endpointId)).toEqual([free, free]);
      const skipped = deliveries.filter((d) => d.endpointId !== free);
      for (const d of skipped) {
        expect(await deliveryRow(storage, d)).toMatchObject({
          status: "pending",
          leaseToken: null,
          nextAttemptAt: T0,
        });
      }
      expect(ids((await storage.claimDue(lease(T0))).map((c) => c.delivery))).toEqual(ids(skipped));
    });

    test("held and terminal deliveries are never claimed", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 7);
      const { deliveries } = await fanOut(storage, { endpoints });
      const claimed = await claimAll(storage, T0);
      const kinds = ["succeeded", "failed", "dead-lettered", "expired", "held", "cancelled"] as const;
      for (const [i, kind] of kinds.entries()) {
        await settle(storage, claimed.get(deliveries[i]!.id)!, { kind }, T0);
      }
      await settle(storage, claimed.get(deliveries[6]!.id)!, { kind: "deferred", nextAttemptAt: T0 }, T0);
      const later = await storage.claimDue(lease(T0 + 365 * 86_400_000));
      expect(later.map((c) => c.delivery.id)).toEqual([deliveries[6]!.id]);
    });

    test("a claimed delivery carries its lease: a token, the owner and nextAttemptAt = until", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, { endpoints: [endpoint!] });
      const [claimed] = await storage.claimDue(lease(T0, { owner: "worker-7", until: T0 + 45_000 }));
      expect(claimed!.leaseToken).toEqual(expect.any(String));
      expect(claimed!.delivery).toMatchObject({
        id: deliveries[0]!.id,
        status: "pending",
        leaseToken: claimed!.leaseToken,
        leaseOwner: "worker-7",
        nextAttemptAt: T0 + 45_000,
      });
      expect(await deliveryRow(storage, deliveries[0]!)).toMatchObject({
        leaseToken: claimed!.leaseToken,
        leaseOwner: "worker-7",
        nextAttemptAt: T0 + 45_000,
      });
    });

    test("a claimed delivery is not returned again before its lease expires", async () => {
      const storage = context.storage();
      await fanOut(storage, { endpoints: await createEndpoints(storage, 1) });
      expect(await storage.claimDue(lease(T0))).toHaveLength(1);
      expect(await storage.claimDue(lease(T0 + LEASE_MS - 1))).toEqual([]);
    });

    test("once the lease expires (now = until) another claimer gets the delivery with a new token", async () => {
      const storage = context.storage();
      await fanOut(storage, { endpoints: await createEndpoints(storage, 1) });
      const [first] = await storage.claimDue(lease(T0));
      const [second] = await storage.claimDue(lease(T0 + LEASE_MS, { owner: "worker-2" }));
      expect(second?.delivery.id).toBe(first!.delivery.id);
      expect(second?.leaseToken).not.toBe(first!.leaseToken);
      expect(second?.delivery.leaseOwner).toBe("worker-2");
    });

    test("claimDue joins each delivery with its own message", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { messages } = await fanOut(storage, {
        endpoints,
        messages: [
          { type: "order.created", payload: '{"n":1}' },
          { type: "order.paid", payload: '{"n":2}' },
        ],
      });
      const claimed = await storage.claimDue(lease(T0));
      expect(claimed).toHaveLength(4);
      for (const { delivery, message } of claimed) {
        const written = messages.find((m) => m.id === delivery.messageId)!;
        expect(message).toEqual({ ...written, status: "pending", fannedOutAt: T0, finishedAt: null });
      }
    });

    for (const workers of [2, 10]) {
      test(`${workers} concurrent claimDue calls over 200 due deliveries never return one twice and together return all`, async () => {
        const storage = context.storage();
        const endpoints = await createEndpoints(storage, 10);
        const { deliveries } = await fanOut(storage, { endpoints, messages: 20 });
        const limit = Math.ceil(300 / workers);
        const batches = await Promise.all(
          Array.from({ length: workers }, (_, i) =>
            storage.claimDue(lease(T0, { owner: `worker-${i}`, limit })),
          ),
        );
        const claimed: ClaimedDelivery[] = batches.flat();
        expect(claimed).toHaveLength(200);
        expect(new Set(claimed.map((c) => c.delivery.id)).size).toBe(200);
        expect(ids(claimed.map((c) => c.delivery))).toEqual(ids(deliveries));
        for (const { delivery, message } of claimed) expect(message.id).toBe(delivery.messageId);
      });
    }
  });

  group(context, "leases", (test) => {
    test("renewLeases extends a lease still held to `until` and reports nothing lost", async () => {
      const storage = context.storage();
      const { deliveries } = await fanOut(storage, { endpoints: await createEndpoints(storage, 1) });
      const claimed = await claimOne(storage, deliveries[0]!.id, T0);
      const lost = await storage.renewLeases(
        [{ deliveryId: claimed.delivery.id, leaseToken: claimed.leaseToken }],
        T0 + 3 * LEASE_MS,
      );
      expect(lost).toEqual([]);
      expect((await deliveryRow(storage, deliveries[0]!)).nextAttemptAt).toBe(T0 + 3 * LEASE_MS);
      expect(await storage.claimDue(lease(T0 + LEASE_MS))).toEqual([]);
      expect(await settle(storage, claimed, { kind: "succeeded" }, T0 + 2 * LEASE_MS)).toEqual({
        recorded: [claimed.delivery.id],
        leaseLost: [],
      });
    });

    test("renewLeases reports a lease lost after it expired and another worker claimed the delivery", async () => {
      const storage = context.storage();
      const { deliveries } = await fanOut(storage, { endpoints: await createEndpoints(storage, 1) });
      const first = await claimOne(storage, deliveries[0]!.id, T0);
      const second = await claimOne(storage, deliveries[0]!.id, T0 + LEASE_MS);
      const lost = await storage.renewLeases(
        [{ deliveryId: first.delivery.id, leaseToken: first.leaseToken }],
        T0 + 5 * LEASE_MS,
      );
      expect(lost).toEqual([first.delivery.id]);
      expect(await deliveryRow(storage, deliveries[0]!)).toMatchObject({
        leaseToken: second.leaseToken,
        nextAttemptAt: T0 + 2 * LEASE_MS,
      });
    });

    test("renewLeases reports only the lost ones in a mixed batch", async () => {
      const storage = context.storage();
      const { deliveries } = await fanOut(storage, { endpoints: await createEndpoints(storage, 2) });
      const claimed = await claimAll(storage, T0);
      const [kept, done] = deliveries.map((d) => claimed.get(d.id)!);
      await settle(storage, done!, { kind: "succeeded" }, T0);
      const lost = await storage.renewLeases(
        [
          { deliveryId: kept!.delivery.id, leaseToken: kept!.leaseToken },
          { deliveryId: done!.delivery.id, leaseToken: done!.leaseToken },
          { deliveryId: "dlv_unknown", leaseToken: kept!.leaseToken },
        ],
        T0 + 2 * LEASE_MS,
      );
      expect(lost.sort()).toEqual([done!.delivery.id, "dlv_unknown"].sort());
      expect((await deliveryRow(storage, done!.delivery)).status).toBe("succeeded");
    });
  });
}
