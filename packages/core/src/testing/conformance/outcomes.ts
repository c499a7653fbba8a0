import { expect } from "vitest";
import type { Storage } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import {
  attemptFor,
  claimAll,
  claimOne,
  createEndpoints,
  deliveryRow,
  fanOut,
  LEASE_MS,
  lease,
  settle,
  T0,
} from "./fixtures.js";

/** One message fanned out to one endpoint and claimed at T0. */
async function oneClaimed(storage: Storage<unknown>) {
  const { messages, deliveries } = await fanOut(storage, { endpoints: await createEndpoints(storage, 1) });
  const claimed = await claimOne(storage, deliveries[0]!.id, T0);
  return { message: messages[0]!, delivery: deliveries[0]!, claimed };
}

/** `recordOutcomes`: transitions, attempts, fencing and message finalisation. */
export function outcomeTests(context: ConformanceContext): void {
  group(context, "outcomes", (test) => {
    test("succeeded: the delivery is succeeded with its lease cleared, and a lone delivery's message is dispatched", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      const result = await settle(storage, claimed, { kind: "succeeded" }, T0 + 100);
      expect(result).toEqual({ recorded: [delivery.id], leaseLost: [] });
      expect(await deliveryRow(storage, delivery)).toMatchObject({
        status: "succeeded",
        leaseToken: null,
        leaseOwner: null,
        attemptsMade: 1,
        retriesUsed: 0,
        updatedAt: T0 + 100,
      });
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 100,
      });
    });

    test("retry: the delivery is pending again with the given retriesUsed and lastError, due at nextAttemptAt", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      await storage.recordOutcomes(
        [
          {
            deliveryId: delivery.id,
            leaseToken: claimed.leaseToken,
            transition: { kind: "retry", nextAttemptAt: T0 + 5_000, retriesUsed: 1 },
            attempt: attemptFor(claimed, { outcome: "retryable", statusCode: 503, error: "HTTP 503" }),
            lastError: "HTTP 503",
          },
        ],
        T0 + 100,
      );
      expect(await deliveryRow(storage, delivery)).toMatchObject({
        status: "pending",
        nextAttemptAt: T0 + 5_000,
        retriesUsed: 1,
        attemptsMade: 1,
        lastError: "HTTP 503",
        leaseToken: null,
        leaseOwner: null,
      });
      expect(await storage.getMessage(message.id)).toMatchObject({ status: "pending", finishedAt: null });
      expect(await storage.claimDue(lease(T0 + 4_999))).toEqual([]);
      expect(await storage.claimDue(lease(T0 + 5_000))).toHaveLength(1);
    });

    test("failed (permanent): the delivery is failed and the message, with nothing dead-lettered or expired, is dispatched", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      await settle(storage, claimed, { kind: "failed" }, T0 + 100);
      expect((await deliveryRow(storage, delivery)).status).toBe("failed");
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 100,
      });
    });

    test("dead-lettered: the delivery and its message are dead-lettered", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      await settle(storage, claimed, { kind: "dead-lettered" }, T0 + 100);
      expect((await deliveryRow(storage, delivery)).status).toBe("dead-lettered");
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "dead-lettered",
        finishedAt: T0 + 100,
      });
    });

    test("expired: the delivery and its message are expired, with no attempt recorded", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      await settle(storage, claimed, { kind: "expired" }, T0 + 100);
      expect(await deliveryRow(storage, delivery)).toMatchObject({ status: "expired", attemptsMade: 0 });
      expect(await storage.getMessage(message.id)).toMatchObject({ status: "expired", finishedAt: T0 + 100 });
      expect(await storage.endpointHealth(delivery.endpointId, 0)).toEqual({ attempts: 0, failures: 0 });
      if (storage.operations) expect(await storage.operations.listAttempts(message.id)).toEqual([]);
    });

    test("deferred: pending again at nextAttemptAt without an attempt and without consuming a retry", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      await settle(storage, claimed, { kind: "retry", nextAttemptAt: T0 + 1_000, retriesUsed: 2 }, T0);
      const again = await claimOne(storage, delivery.id, T0 + 1_000);
      await settle(storage, again, { kind: "deferred", nextAttemptAt: T0 + 300_000 }, T0 + 1_000);
      expect(await deliveryRow(storage, delivery)).toMatchObject({
        status: "pending",
        nextAttemptAt: T0 + 300_000,
        retriesUsed: 2,
        attemptsMade: 1,
        leaseToken: null,
      });
      // Only the retry's attempt: it failed (retryable); the deferral counts nothing.
      expect(await storage.endpointHealth(delivery.endpointId, 0)).toEqual({ attempts: 1, failures: 1 });
      if (storage.operations) expect(await storage.operations.listAttempts(message.id)).toHaveLength(1);
      expect(await storage.claimDue(lease(T0 + 299_999))).toEqual([]);
    });

    test("held: the delivery is parked, never claimed, and its message stays pending", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      await settle(storage, claimed, { kind: "held" }, T0 + 100);
      expect(await deliveryRow(storage, delivery)).toMatchObject({
        status: "held",
        leaseToken: null,
        attemptsMade: 0,
      });
      expect(await storage.claimDue(lease(T0 + 365 * 86_400_000))).toEqual([]);
      expect(await storage.getMessage(message.id)).toMatchObject({ status: "pending", finishedAt: null });
    });

    test("cancelled: the delivery is cancelled and a message with only cancelled deliveries is dispatched", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      await settle(storage, claimed, { kind: "cancelled" }, T0 + 100);
      expect((await deliveryRow(storage, delivery)).status).toBe("cancelled");
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 100,
      });
    });

    test("attempts are stored as given and listed by startedAt, then attemptNumber, across a message's deliveries", async (t) => {
      const operations = t.needs("operations");
      const storage = context.storage();
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: await createEndpoints(storage, 2),
      });
      const [a, b] = deliveries;
      let claimed = await claimAll(storage, T0);
      const b1 = attemptFor(claimed.get(b!.id)!, {
        startedAt: T0 + 5,
        outcome: "retryable",
        statusCode: null,
        errorCode: "TIMEOUT",
        error: "timeout after 15s",
        responseSnippet: null,
      });
      await storage.recordOutcomes(
        [
          {
            deliveryId: b!.id,
            leaseToken: claimed.get(b!.id)!.leaseToken,
            transition: { kind: "retry", nextAttemptAt: T0 + 1_000, retriesUsed: 1 },
            attempt: b1,
          },
          {
            deliveryId: a!.id,
            leaseToken: claimed.get(a!.id)!.leaseToken,
            transition: { kind: "deferred", nextAttemptAt: T0 + 1_000 },
          },
        ],
        T0 + 20,
      );
      claimed = await claimAll(storage, T0 + 1_000);
      // Same startedAt, recorded in the opposite order: attemptNumber decides.
      const b2 = attemptFor(claimed.get(b!.id)!, { startedAt: T0 + 10, latencyMs: 7 });
      const a1 = attemptFor(claimed.get(a!.id)!, {
        startedAt: T0 + 10,
        outcome: "retryable",
        statusCode: 500,
        error: "HTTP 500",
        responseSnippet: "<html>oops</html>",
      });
      await storage.recordOutcomes(
        [
          {
            deliveryId: b!.id,
            leaseToken: claimed.get(b!.id)!.leaseToken,
            transition: { kind: "succeeded" },
            attempt: b2,
          },
          {
            deliveryId: a!.id,
            leaseToken: claimed.get(a!.id)!.leaseToken,
            transition: { kind: "retry", nextAttemptAt: T0 + 2_000, retriesUsed: 1 },
            attempt: a1,
          },
        ],
        T0 + 1_100,
      );
      const last = await claimOne(storage, a!.id, T0 + 2_000);
      const a2 = attemptFor(last, {
        startedAt: T0 + 1_500,
        outcome: "permanent",
        statusCode: 410,
        error: "HTTP 410",
      });
      await settle(storage, last, { kind: "failed" }, T0 + 2_100, a2);
      expect([a1.attemptNumber, a2.attemptNumber, b1.attemptNumber, b2.attemptNumber]).toEqual([1, 2, 1, 2]);
      expect(await operations.listAttempts(messages[0]!.id)).toEqual([b1, a1, b2, a2]);
    });

    test("attemptsMade counts only outcomes that carry an attempt", async () => {
      const storage = context.storage();
      const { delivery, claimed } = await oneClaimed(storage);
      await settle(storage, claimed, { kind: "deferred", nextAttemptAt: T0 + 1 }, T0);
      let again = await claimOne(storage, delivery.id, T0 + 1);
      await settle(storage, again, { kind: "retry", nextAttemptAt: T0 + 2, retriesUsed: 1 }, T0 + 1);
      again = await claimOne(storage, delivery.id, T0 + 2);
      await settle(storage, again, { kind: "retry", nextAttemptAt: T0 + 3, retriesUsed: 2 }, T0 + 2, false);
      again = await claimOne(storage, delivery.id, T0 + 3);
      await settle(storage, again, { kind: "succeeded" }, T0 + 3);
      expect(await deliveryRow(storage, delivery)).toMatchObject({
        attemptsMade: 2,
        retriesUsed: 2,
        status: "succeeded",
      });
    });

    test("an outcome with a stale lease token is reported in leaseLost and writes nothing, not even its attempt", async () => {
      const storage = context.storage();
      const { message, delivery, claimed: stale } = await oneClaimed(storage);
      const current = await claimOne(storage, delivery.id, T0 + LEASE_MS);
      const result = await settle(storage, stale, { kind: "dead-lettered" }, T0 + LEASE_MS + 1);
      expect(result).toEqual({ recorded: [], leaseLost: [delivery.id] });
      expect(await deliveryRow(storage, delivery)).toMatchObject({
        status: "pending",
        attemptsMade: 0,
        leaseToken: current.leaseToken,
        nextAttemptAt: T0 + 2 * LEASE_MS,
      });
      if (storage.operations) expect(await storage.operations.listAttempts(message.id)).toEqual([]);
      expect(await storage.endpointHealth(delivery.endpointId, 0)).toEqual({ attempts: 0, failures: 0 });
      expect(await storage.getMessage(message.id)).toMatchObject({ status: "pending" });
      expect((await settle(storage, current, { kind: "succeeded" }, T0 + LEASE_MS + 2)).recorded).toEqual([
        delivery.id,
      ]);
    });

    test("recording a second outcome with the same token is refused as lease lost", async () => {
      const storage = context.storage();
      const { message, delivery, claimed } = await oneClaimed(storage);
      await settle(storage, claimed, { kind: "succeeded" }, T0 + 1);
      const again = await settle(storage, claimed, { kind: "failed" }, T0 + 2);
      expect(again).toEqual({ recorded: [], leaseLost: [delivery.id] });
      expect(await deliveryRow(storage, delivery)).toMatchObject({ status: "succeeded", attemptsMade: 1 });
      expect(await storage.endpointHealth(delivery.endpointId, 0)).toEqual({ attempts: 1, failures: 0 });
      if (storage.operations) expect(await storage.operations.listAttempts(message.id)).toHaveLength(1);
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 1,
      });
    });

    test("a message stays pending while any sibling delivery is pending or held", async () => {
      const storage = context.storage();
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: await createEndpoints(storage, 3),
      });
      const claimed = await claimAll(storage, T0);
      const [done, parked, waiting] = deliveries.map((d) => claimed.get(d.id)!);
      await settle(storage, done!, { kind: "succeeded" }, T0 + 1);
      await settle(storage, parked!, { kind: "held" }, T0 + 1);
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "pending",
        finishedAt: null,
      });
      await settle(storage, waiting!, { kind: "succeeded" }, T0 + 2);
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "pending",
        finishedAt: null,
      });
    });

    test("a finished message is dead-lettered when any delivery dead-lettered, even beside expired and succeeded ones", async () => {
      const storage = context.storage();
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: await createEndpoints(storage, 3),
      });
      const claimed = await claimAll(storage, T0);
      await settle(storage, claimed.get(deliveries[0]!.id)!, { kind: "dead-lettered" }, T0 + 1);
      await settle(storage, claimed.get(deliveries[1]!.id)!, { kind: "expired" }, T0 + 2);
      expect((await storage.getMessage(messages[0]!.id))?.status).toBe("pending");
      await settle(storage, claimed.get(deliveries[2]!.id)!, { kind: "succeeded" }, T0 + 3);
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "dead-lettered",
        finishedAt: T0 + 3,
      });
    });

    test("a finished message is expired when a delivery expired and none dead-lettered", async () => {
      const storage = context.storage();
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: await createEndpoints(storage, 3),
      });
      const claimed = await claimAll(storage, T0);
      await settle(storage, claimed.get(deliveries[0]!.id)!, { kind: "failed" }, T0 + 1);
      await settle(storage, claimed.get(deliveries[1]!.id)!, { kind: "succeeded" }, T0 + 1);
      await settle(storage, claimed.get(deliveries[2]!.id)!, { kind: "expired" }, T0 + 4);
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "expired",
        finishedAt: T0 + 4,
      });
    });

    test("outcomes for several messages and endpoints are recorded in one call", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { messages, deliveries } = await fanOut(storage, { endpoints, messages: 2 });
      const claimed = await claimAll(storage, T0);
      const [m1e1, m1e2, m2e1, m2e2] = deliveries;
      const outcome = (id: string, kind: "succeeded" | "dead-lettered" | "held") =>
        ({
          deliveryId: id,
          leaseToken: claimed.get(id)!.leaseToken,
          transition: { kind },
          ...(kind === "held"
            ? {}
            : {
                attempt: attemptFor(claimed.get(id)!, {
                  startedAt: T0 + 1,
                  outcome: kind === "succeeded" ? "success" : "retryable",
                }),
              }),
        }) as const;
      const result = await storage.recordOutcomes(
        [
          outcome(m1e1!.id, "succeeded"),
          outcome(m1e2!.id, "succeeded"),
          outcome(m2e1!.id, "dead-lettered"),
          outcome(m2e2!.id, "held"),
        ],
        T0 + 5,
      );
      expect(result.leaseLost).toEqual([]);
      expect([...result.recorded].sort()).toEqual(deliveries.map((d) => d.id).sort());
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 5,
      });
      expect(await storage.getMessage(messages[1]!.id)).toMatchObject({
        status: "pending",
        finishedAt: null,
      });
      expect((await storage.listDeliveries(messages[1]!.id)).map((d) => d.status)).toEqual([
        "dead-lettered",
        "held",
      ]);
      expect(await storage.endpointHealth(endpoints[0]!.id, T0)).toEqual({ attempts: 2, failures: 1 });
      expect(await storage.endpointHealth(endpoints[1]!.id, T0)).toEqual({ attempts: 1, failures: 0 });
    });
  });
}
