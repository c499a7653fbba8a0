import { expect } from "vitest";
import type { ClaimedDelivery, EndpointRecord, NewDelivery } from "../../storage/records.js";
import type { DeliveryOutcome, DeliveryTransition, Storage } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import {
  attemptFor,
  claimAll,
  createEndpoints,
  deliveryRow,
  fanOut,
  ids,
  LEASE_MS,
  lease,
  madeHttpCall,
  newMessage,
  nextId,
  settle,
  T0,
} from "./fixtures.js";

/** A message claimed for fan-out at `now`, and the one delivery a worker would make straight from it. */
async function claimedDirect(storage: Storage<unknown>, endpoint: EndpointRecord, now = T0) {
  const message = newMessage({ createdAt: now });
  await storage.enqueue(message);
  const [claim] = await storage.claimFanout(lease(now, { limit: 1 }));
  if (claim?.message.id !== message.id)
    throw new Error("fixture: claimFanout did not return the new message");
  const fresh: NewDelivery = {
    id: nextId("dlv"),
    messageId: message.id,
    endpointId: endpoint.id,
    webhookId: message.id,
    createdAt: now,
  };
  return { message, token: claim.token, fresh };
}

/** The outcome a worker records for a direct delivery (with an attempt when the transition made a call). */
function directOutcome(
  fresh: NewDelivery,
  token: string,
  transition: DeliveryTransition,
  startedAt: number,
): DeliveryOutcome {
  const claimed = { delivery: { ...fresh, attemptsMade: 0 } } as unknown as ClaimedDelivery;
  const outcome = transition.kind === "succeeded" ? "success" : "retryable";
  const httpCall = madeHttpCall(transition);
  return {
    deliveryId: fresh.id,
    leaseToken: token,
    transition,
    newDelivery: fresh,
    ...(httpCall
      ? {
          attempt: attemptFor(claimed, {
            startedAt,
            outcome: transition.kind === "failed" ? "permanent" : outcome,
            statusCode: transition.kind === "succeeded" ? 200 : 500,
          }),
          lastError: transition.kind === "succeeded" ? null : "HTTP 500",
        }
      : {}),
  };
}

/** Deliveries made straight from a leased message: `recordOutcomes` with `newDelivery`, `renewFanoutLeases`. */
export function directTests(context: ConformanceContext): void {
  group(context, "direct", (test) => {
    test("a direct success inserts the delivery with its outcome, its attempt and health, and finishes the message", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { message, token, fresh } = await claimedDirect(storage, endpoint!);
      const outcome = directOutcome(fresh, token, { kind: "succeeded" }, T0 + 10);
      expect(await storage.recordOutcomes([outcome], T0 + 50)).toEqual({
        recorded: [fresh.id],
        leaseLost: [],
      });
      expect(await storage.listDeliveries(message.id)).toEqual([
        {
          ...fresh,
          status: "succeeded",
          retriesUsed: 0,
          attemptsMade: 1,
          nextAttemptAt: expect.any(Number),
          leaseToken: null,
          leaseOwner: null,
          lastError: null,
          updatedAt: T0 + 50,
        },
      ]);
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "dispatched",
        fannedOutAt: T0 + 50,
        finishedAt: T0 + 50,
      });
      expect(await storage.operations!.listAttempts(message.id)).toEqual([outcome.attempt]);
      expect(await storage.endpointHealth(endpoint!.id, 0)).toEqual({ attempts: 1, failures: 0 });
      // Fanned out: never claimed for fan-out again, even once its lease would have expired.
      expect(await storage.claimFanout(lease(T0 + 2 * LEASE_MS))).toEqual([]);
      expect(await storage.claimDue(lease(T0 + 2 * LEASE_MS))).toEqual([]);
    });

    test("outcomes apply in order: a second direct outcome for a message already fanned out in the same call is lease lost", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { message, token, fresh } = await claimedDirect(storage, endpoint!);
      const twin: NewDelivery = { ...fresh, id: nextId("dlv") };
      const first = directOutcome(fresh, token, { kind: "succeeded" }, T0 + 10);
      const second = directOutcome(twin, token, { kind: "succeeded" }, T0 + 20);
      expect(await storage.recordOutcomes([first, second], T0 + 50)).toEqual({
        recorded: [fresh.id],
        leaseLost: [twin.id],
      });
      expect((await storage.listDeliveries(message.id)).map((d) => d.id)).toEqual([fresh.id]);
      expect(await storage.operations!.listAttempts(message.id)).toEqual([first.attempt]);
      expect(await storage.endpointHealth(endpoint!.id, 0)).toEqual({ attempts: 1, failures: 0 });
    });

    test("a direct retry inserts the delivery pending with its retries, due at nextAttemptAt; the message stays pending", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { message, token, fresh } = await claimedDirect(storage, endpoint!);
      const retry: DeliveryTransition = { kind: "retry", nextAttemptAt: T0 + 5_000, retriesUsed: 1 };
      await storage.recordOutcomes([directOutcome(fresh, token, retry, T0)], T0 + 50);
      expect(await deliveryRow(storage, fresh)).toMatchObject({
        status: "pending",
        retriesUsed: 1,
        attemptsMade: 1,
        nextAttemptAt: T0 + 5_000,
        leaseToken: null,
        lastError: "HTTP 500",
      });
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "pending",
        fannedOutAt: T0 + 50,
        finishedAt: null,
      });
      expect(await storage.endpointHealth(endpoint!.id, 0)).toEqual({ attempts: 1, failures: 1 });
      expect(await storage.claimDue(lease(T0 + 4_999))).toEqual([]);
      const due = await claimAll(storage, T0 + 5_000);
      expect([...due.keys()]).toEqual([fresh.id]);
      const claimed = due.get(fresh.id)!;
      expect(claimed.message.id).toBe(message.id);
      expect(claimed.direct).toBeFalsy();
      await settle(storage, claimed, { kind: "succeeded" }, T0 + 6_000);
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 6_000,
      });
      expect(await storage.operations!.listAttempts(message.id)).toHaveLength(2);
    });

    test("direct terminal failures finish the message: dead-lettered, expired, failed (dispatched) and cancelled (dispatched)", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const cases: [DeliveryTransition["kind"], string][] = [
        ["dead-lettered", "dead-lettered"],
        ["expired", "expired"],
        ["failed", "dispatched"],
        ["cancelled", "dispatched"],
      ];
      for (const [kind, messageStatus] of cases) {
        const { message, token, fresh } = await claimedDirect(storage, endpoint!);
        const transition = { kind } as DeliveryTransition;
        const result = await storage.recordOutcomes([directOutcome(fresh, token, transition, T0)], T0 + 9);
        expect(result.recorded).toEqual([fresh.id]);
        expect((await deliveryRow(storage, fresh)).status).toBe(kind);
        expect(await storage.getMessage(message.id)).toMatchObject({
          status: messageStatus,
          finishedAt: T0 + 9,
        });
        const attempts = kind === "expired" || kind === "cancelled" ? 0 : 1;
        expect(await storage.operations!.listAttempts(message.id)).toHaveLength(attempts);
        expect((await deliveryRow(storage, fresh)).attemptsMade).toBe(attempts);
      }
    });

    test("direct held and deferred deliveries are inserted without an attempt: held waits for releaseHeld, deferred is due later", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const held = await claimedDirect(storage, endpoint!);
      await storage.recordOutcomes([directOutcome(held.fresh, held.token, { kind: "held" }, T0)], T0);
      const deferred = await claimedDirect(storage, endpoint!);
      const later: DeliveryTransition = { kind: "deferred", nextAttemptAt: T0 + 30_000 };
      await storage.recordOutcomes([directOutcome(deferred.fresh, deferred.token, later, T0)], T0);
      expect(await deliveryRow(storage, held.fresh)).toMatchObject({ status: "held", attemptsMade: 0 });
      expect(await deliveryRow(storage, deferred.fresh)).toMatchObject({
        status: "pending",
        attemptsMade: 0,
        retriesUsed: 0,
        nextAttemptAt: T0 + 30_000,
      });
      expect((await storage.getMessage(held.message.id))?.status).toBe("pending");
      expect((await storage.getMessage(deferred.message.id))?.status).toBe("pending");
      expect(await storage.endpointHealth(endpoint!.id, 0)).toEqual({ attempts: 0, failures: 0 });
      expect([...(await claimAll(storage, T0 + 29_999)).keys()]).toEqual([]);
      expect(await storage.releaseHeld(endpoint!.id, T0 + 29_999)).toBe(1);
      const due = await claimAll(storage, T0 + 30_000);
      expect([...due.keys()].sort()).toEqual([held.fresh.id, deferred.fresh.id].sort());
    });

    test("a direct outcome under a lost fan-out lease writes nothing, and the new lease holder's does", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { message, token: stale, fresh } = await claimedDirect(storage, endpoint!);
      const [current] = await storage.claimFanout(lease(T0 + LEASE_MS, { owner: "worker-2" }));
      expect(current?.message.id).toBe(message.id);
      const lost = await storage.recordOutcomes(
        [directOutcome(fresh, stale, { kind: "succeeded" }, T0 + 1)],
        T0 + LEASE_MS + 1,
      );
      expect(lost).toEqual({ recorded: [], leaseLost: [fresh.id] });
      expect(await storage.listDeliveries(message.id)).toEqual([]);
      expect(await storage.operations!.listAttempts(message.id)).toEqual([]);
      expect(await storage.endpointHealth(endpoint!.id, 0)).toEqual({ attempts: 0, failures: 0 });
      expect(await storage.getMessage(message.id)).toMatchObject({ status: "pending", fannedOutAt: null });
      const again = { ...fresh, id: nextId("dlv") };
      const kept = await storage.recordOutcomes(
        [directOutcome(again, current!.token, { kind: "succeeded" }, T0 + LEASE_MS + 2)],
        T0 + LEASE_MS + 3,
      );
      expect(kept).toEqual({ recorded: [again.id], leaseLost: [] });
      expect(ids(await storage.listDeliveries(message.id))).toEqual([again.id]);
    });

    test("a message is fanned out once: a second direct outcome, or one after recordFanout, is lease lost", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const first = await claimedDirect(storage, endpoint!);
      await storage.recordOutcomes([directOutcome(first.fresh, first.token, { kind: "succeeded" }, T0)], T0);
      const twice = { ...first.fresh, id: nextId("dlv") };
      expect(
        await storage.recordOutcomes([directOutcome(twice, first.token, { kind: "succeeded" }, T0)], T0 + 1),
      ).toEqual({ recorded: [], leaseLost: [twice.id] });

      const second = await claimedDirect(storage, endpoint!);
      await storage.recordFanout(
        [{ messageId: second.message.id, token: second.token, deliveries: [second.fresh] }],
        T0 + 2,
      );
      const late = { ...second.fresh, id: nextId("dlv") };
      expect(
        await storage.recordOutcomes([directOutcome(late, second.token, { kind: "succeeded" }, T0)], T0 + 3),
      ).toEqual({ recorded: [], leaseLost: [late.id] });
      expect(ids(await storage.listDeliveries(first.message.id))).toEqual([first.fresh.id]);
      expect(ids(await storage.listDeliveries(second.message.id))).toEqual([second.fresh.id]);
    });

    test("direct and ordinary outcomes, for several messages, are recorded in one call", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { messages, deliveries } = await fanOut(storage, { endpoints });
      const claimed = await claimAll(storage, T0);
      const direct = [
        await claimedDirect(storage, endpoints[0]!),
        await claimedDirect(storage, endpoints[1]!),
      ];
      const ordinary = deliveries.map((d) => claimed.get(d.id)!);
      const outcomes: DeliveryOutcome[] = [
        ...ordinary.map((c) => ({
          deliveryId: c.delivery.id,
          leaseToken: c.leaseToken,
          transition: { kind: "succeeded" } as const,
          attempt: attemptFor(c, { startedAt: T0 + 1 }),
        })),
        directOutcome(direct[0]!.fresh, direct[0]!.token, { kind: "succeeded" }, T0 + 1),
        directOutcome(direct[1]!.fresh, "stale-token", { kind: "succeeded" }, T0 + 1),
      ];
      const result = await storage.recordOutcomes(outcomes, T0 + 5);
      expect(result.recorded.sort()).toEqual([...deliveries.map((d) => d.id), direct[0]!.fresh.id].sort());
      expect(result.leaseLost).toEqual([direct[1]!.fresh.id]);
      expect((await storage.getMessage(messages[0]!.id))?.status).toBe("dispatched");
      expect((await storage.getMessage(direct[0]!.message.id))?.status).toBe("dispatched");
      expect((await storage.getMessage(direct[1]!.message.id))?.status).toBe("pending");
      expect(await storage.endpointHealth(endpoints[0]!.id, 0)).toEqual({ attempts: 2, failures: 0 });
      expect(await storage.endpointHealth(endpoints[1]!.id, 0)).toEqual({ attempts: 1, failures: 0 });
    });

    test("renewFanoutLeases keeps a held fan-out lease and reports lost, fanned-out and unknown ones", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const kept = await claimedDirect(storage, endpoint!);
      const taken = await claimedDirect(storage, endpoint!);
      const done = await claimedDirect(storage, endpoint!);
      await storage.recordOutcomes([directOutcome(done.fresh, done.token, { kind: "succeeded" }, T0)], T0);
      const renewals = [kept, taken, done].map(({ message, token }) => ({ messageId: message.id, token }));
      expect(await storage.direct!.renewFanoutLeases(renewals.slice(0, 1), T0 + 3 * LEASE_MS)).toEqual([]);
      // At T0 + LEASE_MS only `taken` (not renewed) can be claimed by another worker.
      const reclaimed = await storage.claimFanout(lease(T0 + LEASE_MS, { owner: "worker-2" }));
      expect(reclaimed.map((c) => c.message.id)).toEqual([taken.message.id]);
      const lost = await storage.direct!.renewFanoutLeases(
        [...renewals, { messageId: "msg_unknown", token: kept.token }],
        T0 + 4 * LEASE_MS,
      );
      expect(lost.sort()).toEqual([taken.message.id, done.message.id, "msg_unknown"].sort());
      const result = await storage.recordOutcomes(
        [directOutcome(kept.fresh, kept.token, { kind: "succeeded" }, T0)],
        T0 + 2 * LEASE_MS,
      );
      expect(result.recorded).toEqual([kept.fresh.id]);
    });
  });
}
