import { expect } from "vitest";
import { HEALTH_BUCKET_MS } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import { claimAll, createEndpoints, deliveryRow, fanOut, lease, settle, T0 } from "./fixtures.js";

/** Health buckets written by `recordOutcomes`, and `releaseHeld`. */
export function healthTests(context: ConformanceContext): void {
  group(context, "health", (test) => {
    test("endpointHealth counts attempts and non-success failures per endpoint; outcomes without an attempt count nothing", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints, messages: 4 });
      const claimed = await claimAll(storage, T0);
      const onFirst = deliveries
        .filter((d) => d.endpointId === endpoints[0]!.id)
        .map((d) => claimed.get(d.id)!);
      const onSecond = deliveries
        .filter((d) => d.endpointId === endpoints[1]!.id)
        .map((d) => claimed.get(d.id)!);
      await settle(storage, onFirst[0]!, { kind: "succeeded" }, T0);
      await settle(storage, onFirst[1]!, { kind: "retry", nextAttemptAt: T0 + 1_000, retriesUsed: 1 }, T0);
      await settle(storage, onFirst[2]!, { kind: "failed" }, T0);
      await settle(storage, onFirst[3]!, { kind: "deferred", nextAttemptAt: T0 + 1_000 }, T0);
      await settle(storage, onSecond[0]!, { kind: "dead-lettered" }, T0);
      await settle(storage, onSecond[1]!, { kind: "held" }, T0);
      await settle(storage, onSecond[2]!, { kind: "expired" }, T0);
      await settle(storage, onSecond[3]!, { kind: "cancelled" }, T0);
      expect(await storage.endpointHealth(endpoints[0]!.id, T0)).toEqual({ attempts: 3, failures: 2 });
      expect(await storage.endpointHealth(endpoints[1]!.id, T0)).toEqual({ attempts: 1, failures: 1 });
      expect(await storage.endpointHealth("ep_unknown", 0)).toEqual({ attempts: 0, failures: 0 });
    });

    test("endpointHealth counts an attempt when its bucket start, floor(startedAt / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS, is >= since", async () => {
      const storage = context.storage();
      const bucket = T0 + 5 * HEALTH_BUCKET_MS;
      const { deliveries } = await fanOut(storage, {
        endpoints: await createEndpoints(storage, 1),
        messages: 3,
      });
      const claimed = await claimAll(storage, T0);
      const startedAt = [bucket - 1, bucket, bucket + HEALTH_BUCKET_MS - 1];
      for (const [i, delivery] of deliveries.entries()) {
        await settle(storage, claimed.get(delivery.id)!, { kind: "failed" }, T0, {
          startedAt: startedAt[i]!,
        });
      }
      const health = (since: number) => storage.endpointHealth(deliveries[0]!.endpointId, since);
      expect(await health(bucket - HEALTH_BUCKET_MS)).toEqual({ attempts: 3, failures: 3 });
      expect(await health(bucket - 1)).toEqual({ attempts: 2, failures: 2 });
      expect(await health(bucket)).toEqual({ attempts: 2, failures: 2 });
      // The bucket starting at `bucket` began before `since`, so none of its attempts count.
      expect(await health(bucket + 1)).toEqual({ attempts: 0, failures: 0 });
    });
  });

  group(
    context,
    "health-buckets",
    (test) => {
      test("healthBuckets reads one endpoint's buckets, or every endpoint's summed per start, oldest first, from `since`", async () => {
        const storage = context.storage();
        const [a, b] = await createEndpoints(storage, 2);
        const { deliveries } = await fanOut(storage, { endpoints: [a!, b!], messages: 3 });
        const claimed = await claimAll(storage, T0);
        const onA = deliveries.filter((d) => d.endpointId === a!.id).map((d) => claimed.get(d.id)!);
        const onB = deliveries.filter((d) => d.endpointId === b!.id).map((d) => claimed.get(d.id)!);
        const bucket = (n: number) => T0 + n * HEALTH_BUCKET_MS;
        await settle(storage, onA[0]!, { kind: "succeeded" }, bucket(0), { startedAt: bucket(0) + 1 });
        await settle(storage, onA[1]!, { kind: "failed" }, bucket(0), { startedAt: bucket(1) - 1 });
        await settle(storage, onA[2]!, { kind: "failed" }, bucket(2), { startedAt: bucket(2) });
        await settle(storage, onB[0]!, { kind: "dead-lettered" }, bucket(2), { startedAt: bucket(2) + 5 });
        await settle(storage, onB[1]!, { kind: "succeeded" }, bucket(3), { startedAt: bucket(3) });
        // An outcome without an attempt (a circuit-open deferral) adds no bucket.
        await settle(storage, onB[2]!, { kind: "deferred", nextAttemptAt: bucket(9) }, bucket(5));
        // A deleted endpoint's buckets still count in the sums, as in `stats`' totals.
        await storage.deleteEndpoint(b!.id, bucket(4));

        const ops = storage.operations!;
        const buckets = ops.healthBuckets!.bind(ops);
        expect(await buckets({ since: bucket(0), endpointId: a!.id })).toEqual([
          { start: bucket(0), attempts: 2, failures: 1 },
          { start: bucket(2), attempts: 1, failures: 1 },
        ]);
        expect(await buckets({ since: bucket(0) + 1, endpointId: a!.id })).toEqual([
          { start: bucket(2), attempts: 1, failures: 1 },
        ]);
        expect(await buckets({ since: bucket(0) })).toEqual([
          { start: bucket(0), attempts: 2, failures: 1 },
          { start: bucket(2), attempts: 2, failures: 2 },
          { start: bucket(3), attempts: 1, failures: 0 },
        ]);
        expect(await buckets({ since: bucket(3), endpointId: b!.id })).toEqual([
          { start: bucket(3), attempts: 1, failures: 0 },
        ]);
        expect(await buckets({ since: bucket(4) })).toEqual([]);
        expect(await buckets({ since: 0, endpointId: "ep_unknown" })).toEqual([]);
      });
    },
    (storage) =>
      storage.operations?.healthBuckets === undefined
        ? `the ${storage.name} storage has no operations.healthBuckets (optional)`
        : undefined,
  );

  group(context, "release-held", (test) => {
    test("releaseHeld moves the endpoint's held deliveries back to pending, due now, and returns how many", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints, messages: 3 });
      const claimed = await claimAll(storage, T0);
      const [first, second] = endpoints;
      const ofFirst = deliveries.filter((d) => d.endpointId === first!.id);
      const ofSecond = deliveries.filter((d) => d.endpointId === second!.id);
      await settle(storage, claimed.get(ofFirst[0]!.id)!, { kind: "held" }, T0);
      await settle(storage, claimed.get(ofFirst[1]!.id)!, { kind: "held" }, T0);
      await settle(storage, claimed.get(ofFirst[2]!.id)!, { kind: "succeeded" }, T0);
      for (const delivery of ofSecond) await settle(storage, claimed.get(delivery.id)!, { kind: "held" }, T0);

      const now = T0 + 3_600_000;
      expect(await storage.releaseHeld(first!.id, now)).toBe(2);
      for (const delivery of ofFirst.slice(0, 2)) {
        expect(await deliveryRow(storage, delivery)).toMatchObject({
          status: "pending",
          nextAttemptAt: now,
          leaseToken: null,
        });
      }
      expect((await deliveryRow(storage, ofFirst[2]!)).status).toBe("succeeded");
      for (const delivery of ofSecond) expect((await deliveryRow(storage, delivery)).status).toBe("held");
      const due = await storage.claimDue(lease(now));
      expect(due.map((c) => c.delivery.id).sort()).toEqual(
        ofFirst
          .slice(0, 2)
          .map((d) => d.id)
          .sort(),
      );
      expect(await storage.releaseHeld(first!.id, now)).toBe(0);
    });
  });
}
