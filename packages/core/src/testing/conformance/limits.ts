import { expect } from "vitest";
import type { LimitedClaim } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import { createEndpoints, fanOut, LEASE_MS, settle, T0 } from "./fixtures.js";

const at = (now: number, owner = "worker-1") => ({ owner, now, until: now + LEASE_MS });

/** `claimLimited`: per-endpoint concurrency and rate limits shared by every worker. */
export function limitTests(context: ConformanceContext): void {
  group(context, "limits", (test) => {
    async function backlog(messages: number) {
      const storage = context.storage();
      const [endpoint, other] = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints: [endpoint!], messages });
      await fanOut(storage, { endpoints: [other!], messages: 2 });
      const claim = (over: Partial<LimitedClaim> = {}): LimitedClaim => ({
        endpointId: endpoint!.id,
        want: 100,
        maxInFlight: null,
        rateLimit: null,
        ...over,
      });
      return { storage, endpoint: endpoint!, deliveries, claim };
    }

    test("claimLimited leases at most maxInFlight, counting leases every worker holds, earliest due first", async () => {
      const { storage, deliveries, claim } = await backlog(5);
      const first = await storage.limits!.claimLimited([claim({ maxInFlight: 2 })], at(T0));
      expect(first.map((c) => c.delivery.id)).toEqual(deliveries.slice(0, 2).map((d) => d.id));
      expect(first[0]).toMatchObject({ delivery: { leaseOwner: "worker-1", nextAttemptAt: T0 + LEASE_MS } });
      // Another worker: both slots are taken.
      expect(await storage.limits!.claimLimited([claim({ maxInFlight: 2 })], at(T0 + 1, "worker-2"))).toEqual(
        [],
      );
      // An outcome frees its slot.
      await settle(storage, first[0]!, { kind: "succeeded" }, T0 + 2);
      const next = await storage.limits!.claimLimited([claim({ maxInFlight: 2 })], at(T0 + 3, "worker-2"));
      expect(next.map((c) => c.delivery.id)).toEqual([deliveries[2]!.id]);
    });

    test("claimLimited: an expired lease no longer counts, and its delivery is due again", async () => {
      const { storage, deliveries, claim } = await backlog(1);
      await storage.limits!.claimLimited([claim({ maxInFlight: 1 })], at(T0));
      expect(await storage.limits!.claimLimited([claim({ maxInFlight: 1 })], at(T0 + LEASE_MS - 1))).toEqual(
        [],
      );
      const later = await storage.limits!.claimLimited(
        [claim({ maxInFlight: 1 })],
        at(T0 + LEASE_MS, "worker-2"),
      );
      expect(later.map((c) => c.delivery.id)).toEqual([deliveries[0]!.id]);
      expect(later[0]?.delivery.leaseOwner).toBe("worker-2");
    });

    test("claimLimited spends one token per delivery from a bucket that holds max(1, rateLimit) and refills at rateLimit per second", async () => {
      const { storage, claim } = await backlog(20);
      const count = async (now: number, over: Partial<LimitedClaim> = {}) =>
        (await storage.limits!.claimLimited([claim({ rateLimit: 4, ...over })], at(now))).length;
      expect(await count(T0)).toBe(4); // a new bucket is full
      expect(await count(T0)).toBe(0);
      expect(await count(T0 + 500)).toBe(2);
      expect(await count(T0 + 600)).toBe(0); // 0.4 of a token
      expect(await count(T0 + 750)).toBe(1);
      expect(await count(T0 + 60_000, { want: 3 })).toBe(3); // want caps it; the rest stays in the bucket
      expect(await count(T0 + 60_000)).toBe(1);
    });

    test("claimLimited with a rate below one per second allows one delivery per 1 / rateLimit seconds", async () => {
      const { storage, claim } = await backlog(5);
      const count = async (now: number) =>
        (await storage.limits!.claimLimited([claim({ rateLimit: 0.5 })], at(now))).length;
      expect(await count(T0)).toBe(1);
      expect(await count(T0 + 1_999)).toBe(0);
      expect(await count(T0 + 2_000)).toBe(1);
    });

    test("claimLimited touches only the endpoints asked for, and only due pending deliveries", async () => {
      const { storage, deliveries, claim } = await backlog(2);
      const claimed = await storage.limits!.claimLimited([claim({ maxInFlight: 10 })], at(T0));
      expect(claimed.map((c) => c.delivery.endpointId)).toEqual(deliveries.map((d) => d.endpointId));
      await settle(storage, claimed[0]!, { kind: "retry", nextAttemptAt: T0 + 5_000, retriesUsed: 1 }, T0);
      await settle(storage, claimed[1]!, { kind: "held" }, T0);
      expect(await storage.limits!.claimLimited([claim({ maxInFlight: 10 })], at(T0 + 4_999))).toEqual([]);
      expect(
        await storage.limits!.claimLimited([claim({ maxInFlight: 10, endpointId: "ep_none" })], at(T0)),
      ).toEqual([]);
      const due = await storage.limits!.claimLimited([claim({ maxInFlight: 10 })], at(T0 + 5_000));
      expect(due.map((c) => c.delivery.id)).toEqual([deliveries[0]!.id]);
    });

    test("concurrent claimLimited calls of several workers never lease more than maxInFlight together", async () => {
      const { storage, claim } = await backlog(30);
      const calls = Array.from({ length: 6 }, (_, i) =>
        storage.limits!.claimLimited([claim({ maxInFlight: 4, want: 3 })], at(T0, `worker-${i}`)),
      );
      const claimed = (await Promise.all(calls)).flat();
      expect(claimed).toHaveLength(4);
      expect(new Set(claimed.map((c) => c.delivery.id)).size).toBe(4);
    });

    test("concurrent claimLimited calls never spend more tokens than the bucket holds", async () => {
      const { storage, claim } = await backlog(30);
      const calls = Array.from({ length: 6 }, (_, i) =>
        storage.limits!.claimLimited([claim({ rateLimit: 5, want: 3 })], at(T0, `worker-${i}`)),
      );
      expect((await Promise.all(calls)).flat()).toHaveLength(5);
    });
  });
}
