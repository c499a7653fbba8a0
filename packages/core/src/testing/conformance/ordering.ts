import { expect } from "vitest";
import type { ClaimedDelivery, NewDelivery } from "../../storage/records.js";
import { REFUSED_FANOUT_RETRY_MS } from "../../storage/ordering-store.js";
import type { DeliveryTransition, Storage } from "../../storage/storage.js";
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
  newMessage,
  nextId,
  T0,
} from "./fixtures.js";
import { pruneAll } from "./retention.js";

const DAY = 86_400_000;

/** Records `transition` for `claimed` at `now`, holding its key when `hold` (as core does under `onKeyFailure: "hold"`). */
async function end(
  storage: Storage<unknown>,
  claimed: ClaimedDelivery,
  transition: DeliveryTransition,
  now: number,
  hold = false,
): Promise<void> {
  const http = ["succeeded", "retry", "failed", "dead-lettered"].includes(transition.kind);
  const { recorded } = await storage.recordOutcomes(
    [
      {
        deliveryId: claimed.delivery.id,
        leaseToken: claimed.leaseToken,
        transition,
        ...(http
          ? {
              attempt: attemptFor(claimed, {
                startedAt: now,
                ...(transition.kind === "succeeded"
                  ? {}
                  : { outcome: "retryable", statusCode: 500, error: "HTTP 500" }),
              }),
            }
          : {}),
        ...(claimed.delivery.orderingKey === undefined ? {} : { orderingKey: claimed.delivery.orderingKey }),
        ...(hold ? { holdKey: true as const } : {}),
      },
    ],
    now,
  );
  expect(recorded).toEqual([claimed.delivery.id]);
}

/** The ids a claim at `now` returns, in claim order. */
async function claimedIds(storage: Storage<unknown>, now: number): Promise<string[]> {
  return [...(await claimAll(storage, now)).keys()];
}

/** Statuses of `deliveries`, in their order. */
async function statuses(storage: Storage<unknown>, deliveries: NewDelivery[]): Promise<string[]> {
  return Promise.all(deliveries.map(async (d) => (await deliveryRow(storage, d)).status));
}

/** Enqueues keyed messages (in order) and claims them for fan-out at `now`; the claims by message id. */
async function claimKeyed(storage: Storage<unknown>, keys: (string | undefined)[], now: number) {
  const messages = keys.map((k) =>
    newMessage({ createdAt: now, ...(k === undefined ? {} : { orderingKey: k }) }),
  );
  for (const message of messages) await storage.enqueue(message);
  const claims = await storage.claimFanout(lease(now, { limit: messages.length + 1 }));
  const byId = new Map(claims.map((claim) => [claim.message.id, claim]));
  return messages.map((message) => {
    const claim = byId.get(message.id);
    if (claim === undefined) throw new Error("claimKeyed fixture: a message was not claimed");
    return claim;
  });
}

/** The direct outcome of a clear message's one delivery to `endpoint` (`ORDERING_RULES.directHead`). */
function directKeyed(
  claim: { message: { id: string; orderingKey?: string }; token: string },
  endpoint: { id: string },
  transition: DeliveryTransition,
  now: number,
) {
  const fresh: NewDelivery = {
    id: nextId("dlv"),
    messageId: claim.message.id,
    endpointId: endpoint.id,
    webhookId: claim.message.id,
    createdAt: now,
    orderingKey: claim.message.orderingKey!,
  };
  const claimed = { delivery: { ...fresh, attemptsMade: 0 } } as unknown as ClaimedDelivery;
  return {
    fresh,
    outcome: {
      deliveryId: fresh.id,
      leaseToken: claim.token,
      transition,
      newDelivery: fresh,
      orderingKey: fresh.orderingKey!,
      attempt: attemptFor(claimed, {
        startedAt: now,
        ...(transition.kind === "succeeded" ? {} : { outcome: "retryable" as const, statusCode: 500 }),
      }),
    },
  };
}

/** The storage's `ordering` capability (`ORDERING_RULES`): one delivery per endpoint and key at a time. */
export function orderingTests(context: ConformanceContext): void {
  group(context, "ordering", (test) => {
    test("a key's deliveries to an endpoint: the earliest is pending, the rest wait and are never claimed", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "sub_1" }, { orderingKey: "sub_1" }, { orderingKey: "sub_1" }],
      });
      expect(await statuses(storage, deliveries)).toEqual(["pending", "waiting", "waiting"]);
      expect(await claimedIds(storage, T0 + DAY)).toEqual([deliveries[0]!.id]);
      expect((await deliveryRow(storage, deliveries[1]!)).orderingKey).toBe("sub_1");
    });

    test("other keys, other endpoints and unordered work are not held back by a key's head", async () => {
      const storage = context.storage();
      const [one, two] = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, {
        endpoints: [one!, two!],
        messages: [{ orderingKey: "a" }, { orderingKey: "a" }, { orderingKey: "b" }, {}],
      });
      // Per message: [to one, to two].
      const [a1one, a1two, a2one, a2two, b1one, b1two, u1one, u1two] = deliveries;
      const first = await claimAll(storage, T0);
      expect([...first.keys()].sort()).toEqual(
        [a1one, a1two, b1one, b1two, u1one, u1two].map((d) => d!.id).sort(),
      );
      // a's head on `one` retries; on `two` it succeeds: `two` moves on, `one` waits.
      await end(
        storage,
        first.get(a1one!.id)!,
        { kind: "retry", nextAttemptAt: T0 + 5_000, retriesUsed: 1 },
        T0,
      );
      await end(storage, first.get(a1two!.id)!, { kind: "succeeded" }, T0);
      expect(await statuses(storage, [a2one!, a2two!])).toEqual(["waiting", "pending"]);
      expect(await claimedIds(storage, T0 + 1)).toEqual([a2two!.id]);
    });

    test("when the head ends, the key's next delivery by message id becomes due at once", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }, { orderingKey: "k" }],
      });
      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        const now = T0 + i * 1_000;
        const claims = [...(await claimAll(storage, now)).values()];
        expect(claims).toHaveLength(1);
        order.push(claims[0]!.delivery.id);
        if (i > 0) expect(claims[0]!.delivery.retriesUsed).toBe(0);
        await end(storage, claims[0]!, { kind: "succeeded" }, now);
      }
      expect(order).toEqual(deliveries.map((d) => d.id));
      expect(await claimAll(storage, T0 + DAY)).toHaveProperty("size", 0);
    });

    test("given a NextLease, a head that ends with leaseNext may hand its key's next to the recorder, leased; no other", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }, { orderingKey: "j" }, { orderingKey: "j" }],
      });
      const [k1, k2, j1, j2] = deliveries;
      const claims = await claimAll(storage, T0);
      const ending = (claimed: ClaimedDelivery, leaseNext: boolean) => ({
        deliveryId: claimed.delivery.id,
        leaseToken: claimed.leaseToken,
        transition: { kind: "succeeded" } as const,
        attempt: attemptFor(claimed, { startedAt: T0 }),
        orderingKey: claimed.delivery.orderingKey!,
        ...(leaseNext ? { leaseNext: true as const } : {}),
      });
      const result = await storage.recordOutcomes(
        [ending(claims.get(k1!.id)!, true), ending(claims.get(j1!.id)!, false)],
        T0 + 10,
        { owner: "recorder", until: T0 + 10 + LEASE_MS },
      );
      expect(result.recorded.sort()).toEqual([k1!.id, j1!.id].sort());
      const next = result.next;
      if (next === undefined) {
        // A storage that leases none: both are due now, for any worker.
        expect((await claimedIds(storage, T0 + 20)).sort()).toEqual([k2!.id, j2!.id].sort());
        return;
      }
      // Only k's next (its outcome asked), with its message and a lease that fences like a claim's.
      expect(next.map((c) => c.delivery.id)).toEqual([k2!.id]);
      const [leased] = next;
      expect(leased!.delivery).toMatchObject({
        status: "pending",
        orderingKey: "k",
        messageId: k2!.messageId,
      });
      expect(leased!.message.id).toBe(k2!.messageId);
      expect(leased!.leaseToken).toEqual(expect.any(String));
      expect(await claimedIds(storage, T0 + 20)).toEqual([j2!.id]);
      expect(
        await storage.renewLeases([{ deliveryId: k2!.id, leaseToken: "not-its-token" }], T0 + 30),
      ).toEqual([k2!.id]);
      await end(storage, leased!, { kind: "succeeded" }, T0 + 30);
      expect(await statuses(storage, [k2!])).toEqual(["succeeded"]);
    });

    test("a storage that leases a key's next returns `next` even when nothing was let go, and leaves nothing of those keys due", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }, { orderingKey: "j" }],
      });
      const [k1, k2, j1] = deliveries;
      const claims = await claimAll(storage, T0);
      const ending = (claimed: ClaimedDelivery) => ({
        deliveryId: claimed.delivery.id,
        leaseToken: claimed.leaseToken,
        transition: { kind: "succeeded" } as const,
        attempt: attemptFor(claimed, { startedAt: T0 }),
        orderingKey: claimed.delivery.orderingKey!,
        leaseNext: true as const,
      });
      // j ends with nothing behind it.
      const alone = await storage.recordOutcomes([ending(claims.get(j1!.id)!)], T0 + 10, {
        owner: "recorder",
        until: T0 + 10 + LEASE_MS,
      });
      // k ends with k2 behind it.
      const behind = await storage.recordOutcomes([ending(claims.get(k1!.id)!)], T0 + 10, {
        owner: "recorder",
        until: T0 + 10 + LEASE_MS,
      });
      if (behind.next === undefined) {
        // A storage that leases none: k2 is due now, for any worker; it says so by returning no next.
        expect(alone.next).toBeUndefined();
        expect(await claimedIds(storage, T0 + 20)).toEqual([k2!.id]);
        return;
      }
      // Core reads `next` as complete: whatever a leaseNext outcome let go is in it, and nothing is due.
      expect(alone.next).toEqual([]);
      expect(behind.next.map((c) => c.delivery.id)).toEqual([k2!.id]);
      expect(await claimedIds(storage, T0 + 20)).toEqual([]);
    });

    test("claimFanout may mark a keyed message clear: only its key's earliest, with nothing of the key open or held", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const [k1, k2, j1, u] = await claimKeyed(storage, ["k", "k", "j", undefined], T0);
      // A storage may never mark one (its keyed messages are always fanned out first).
      if (![k1, k2, j1, u].some((c) => c!.clear)) return;
      expect([k1, k2, j1, u].map((c) => c!.clear === true)).toEqual([true, false, true, false]);
      // k1 fanned out: its delivery is open, so the next message of k is not clear, even once k2 is.
      await storage.recordFanout(
        [
          {
            messageId: k1!.message.id,
            token: k1!.token,
            orderingKey: "k",
            deliveries: [
              {
                id: nextId("dlv"),
                messageId: k1!.message.id,
                endpointId: endpoint!.id,
                webhookId: k1!.message.id,
                createdAt: T0,
                orderingKey: "k",
              },
            ],
          },
        ],
        T0,
      );
      // (k2, j1 and the unordered one are claimed again with it: their leases ran out.)
      const k3 = newMessage({ createdAt: T0 + LEASE_MS, orderingKey: "k" });
      await storage.enqueue(k3);
      const again = await storage.claimFanout(lease(T0 + LEASE_MS + 1, { limit: 10 }));
      expect(again.map((c) => c.message.id).sort()).toEqual(
        [k2!.message.id, j1!.message.id, u!.message.id, k3.id].sort(),
      );
      expect(again.filter((c) => c.clear).map((c) => c.message.id)).toEqual([j1!.message.id]);
    });

    test("a clear message delivered straight from its lease: its delivery keeps its key, heads it while it retries, and a fan-out refused meanwhile goes at once", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const [k1] = await claimKeyed(storage, ["k"], T0);
      if (k1!.clear !== true) return;
      // k2 is sent while k1 is in flight: its fan-out is refused (k1 awaits fan-out), for now.
      const [k2] = await claimKeyed(storage, ["k"], T0 + 1);
      const k2Delivery = {
        id: nextId("dlv"),
        messageId: k2!.message.id,
        endpointId: endpoint!.id,
        webhookId: k2!.message.id,
        createdAt: T0 + 1,
        orderingKey: "k",
      };
      const refused = {
        messageId: k2!.message.id,
        token: k2!.token,
        orderingKey: "k",
        deliveries: [k2Delivery],
      };
      expect(await storage.recordFanout([refused], T0 + 1, { owner: "w", until: T0 + LEASE_MS })).toEqual([]);
      const retry = { kind: "retry", nextAttemptAt: T0 + 10_000, retriesUsed: 1 } as const;
      const { fresh, outcome } = directKeyed(k1!, endpoint!, retry, T0 + 2);
      expect((await storage.recordOutcomes([outcome], T0 + 2)).recorded).toEqual([fresh.id]);
      expect(await deliveryRow(storage, fresh)).toMatchObject({
        status: "pending",
        orderingKey: "k",
        attemptsMade: 1,
      });
      // The refused fan-out is claimable again at once, and its delivery now waits behind k1's.
      const [again] = await storage.claimFanout(lease(T0 + 3, { limit: 10 }));
      expect(again?.message.id).toBe(k2!.message.id);
      await storage.recordFanout([{ ...refused, token: again!.token }], T0 + 3);
      expect(await statuses(storage, [k2Delivery])).toEqual(["waiting"]);
      // k1's retry succeeds: k2's delivery goes.
      const head = await claimOne(storage, fresh.id, T0 + 10_000);
      await end(storage, head, { kind: "succeeded" }, T0 + 10_000);
      expect(await claimedIds(storage, T0 + 10_001)).toEqual([k2Delivery.id]);
    });

    test("a replay while a clear message of its key is leased: the replayed head waits out that lease, and the direct delivery recorded meanwhile waits behind it", async () => {
      const storage = context.storage();
      const replay = storage.replay;
      const [endpoint] = await createEndpoints(storage, 1);
      // An earlier message of k, dead-lettered (the key goes on: onKeyFailure "skip").
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }],
      });
      const old = await claimOne(storage, deliveries[0]!.id, T0);
      await end(storage, old, { kind: "dead-lettered" }, T0);
      const now = T0 + 1_000;
      const [k1] = await claimKeyed(storage, ["k"], now);
      if (k1!.clear !== true || replay === undefined) return;
      // While k1 may be in flight to the endpoint, the old delivery is replayed.
      expect(
        await replay.resetDeliveries([{ deliveryId: old.delivery.id, webhookId: nextId("wh") }], now + 1),
      ).toEqual([old.delivery.id]);
      expect(await claimedIds(storage, now + 2)).toEqual([]);
      const { fresh, outcome } = directKeyed(
        k1!,
        endpoint!,
        { kind: "retry", nextAttemptAt: now + 5, retriesUsed: 1 },
        now + 3,
      );
      expect((await storage.recordOutcomes([outcome], now + 3)).recorded).toEqual([fresh.id]);
      // One head: the replayed one, due when k1's lease ends; k1's delivery waits behind it.
      expect(await statuses(storage, [deliveries[0]!, fresh])).toEqual(["pending", "waiting"]);
      expect(await claimedIds(storage, now + LEASE_MS - 1)).toEqual([]);
      expect(await claimedIds(storage, now + LEASE_MS)).toEqual([old.delivery.id]);
    });

    test("a retrying, deferred or held head keeps its key waiting; releaseHeld gives it back the head", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }],
      });
      const [head, next] = deliveries;
      let claims = await claimAll(storage, T0);
      await end(
        storage,
        claims.get(head!.id)!,
        { kind: "retry", nextAttemptAt: T0 + 10_000, retriesUsed: 1 },
        T0,
      );
      expect(await claimedIds(storage, T0 + 5_000)).toEqual([]);
      claims = await claimAll(storage, T0 + 10_000);
      expect([...claims.keys()]).toEqual([head!.id]);
      await end(
        storage,
        claims.get(head!.id)!,
        { kind: "deferred", nextAttemptAt: T0 + 20_000 },
        T0 + 10_000,
      );
      claims = await claimAll(storage, T0 + 20_000);
      expect([...claims.keys()]).toEqual([head!.id]);
      await end(storage, claims.get(head!.id)!, { kind: "held" }, T0 + 20_000);
      expect(await statuses(storage, [head!, next!])).toEqual(["held", "waiting"]);
      expect(await storage.releaseHeld(endpoint!.id, T0 + 30_000)).toBe(1);
      expect(await claimedIds(storage, T0 + 30_000)).toEqual([head!.id]);
    });

    test("a head whose lease expires is claimed again by the next worker; the key's next one still waits", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }],
      });
      expect(await claimedIds(storage, T0)).toEqual([deliveries[0]!.id]);
      expect(await claimedIds(storage, T0 + 1_000)).toEqual([]);
      const again = await storage.claimDue(lease(T0 + LEASE_MS + 1, { owner: "worker-2" }));
      expect(again.map((c) => c.delivery.id)).toEqual([deliveries[0]!.id]);
    });

    test("a dead-lettered, failed or expired head lets the next go; with holdKey the key is held until skipped", async () => {
      const storage = context.storage();
      const ordering = storage.ordering!;
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: ["k", "k", "k", "k", "k"].map((orderingKey) => ({ orderingKey })),
      });
      const [d1, d2, d3, d4, d5] = deliveries;
      let claims = await claimAll(storage, T0);
      await end(storage, claims.get(d1!.id)!, { kind: "dead-lettered" }, T0);
      claims = await claimAll(storage, T0);
      expect([...claims.keys()]).toEqual([d2!.id]);
      await end(storage, claims.get(d2!.id)!, { kind: "failed" }, T0);
      claims = await claimAll(storage, T0);
      expect([...claims.keys()]).toEqual([d3!.id]);
      await end(storage, claims.get(d3!.id)!, { kind: "dead-lettered" }, T0 + 1, true);
      expect(await claimedIds(storage, T0 + DAY)).toEqual([]);
      const held = await ordering.listHeldKeys({ limit: 10 });
      expect(held).toEqual([
        {
          endpointId: endpoint!.id,
          orderingKey: "k",
          deliveryId: d3!.id,
          messageId: d3!.messageId,
          status: "dead-lettered",
          lastError: null,
          heldAt: T0 + 1,
          waiting: 2,
        },
      ]);
      expect(await ordering.listHeldKeys({ limit: 10, countCap: 1 })).toMatchObject([{ waiting: 1 }]);
      expect(await ordering.countWaiting({ cap: 100 })).toBe(2);
      expect(await ordering.countWaiting({ endpointId: endpoint!.id, cap: 1 })).toBe(1);
      expect(await ordering.skipHeldKey(endpoint!.id, "other", T0 + 2)).toBeNull();
      expect(await ordering.skipHeldKey(endpoint!.id, "k", T0 + 2)).toBe(d3!.id);
      expect(await ordering.listHeldKeys({ limit: 10 })).toEqual([]);
      expect(await ordering.skipHeldKey(endpoint!.id, "k", T0 + 3)).toBeNull();
      claims = await claimAll(storage, T0 + 2);
      expect([...claims.keys()]).toEqual([d4!.id]);
      // An expired head (its message's ttl) moves on too.
      await end(storage, claims.get(d4!.id)!, { kind: "expired" }, T0 + 2);
      expect(await claimedIds(storage, T0 + 2)).toEqual([d5!.id]);
      expect((await deliveryRow(storage, d3!)).status).toBe("dead-lettered");
    });

    test("a held key holds new messages of the key too; listHeldKeys pages by endpoint, then key", async () => {
      const storage = context.storage();
      const ordering = storage.ordering!;
      const [one, two] = await createEndpoints(storage, 2);
      const first = await fanOut(storage, {
        endpoints: [one!, two!],
        messages: [{ orderingKey: "b" }, { orderingKey: "a" }],
      });
      const claims = await claimAll(storage, T0);
      for (const claim of claims.values()) await end(storage, claim, { kind: "dead-lettered" }, T0, true);
      const later = await fanOut(storage, {
        endpoints: [one!],
        messages: [{ orderingKey: "a" }],
        now: T0 + 1,
      });
      expect(await statuses(storage, later.deliveries)).toEqual(["waiting"]);
      const all = await ordering.listHeldKeys({ limit: 10 });
      expect(all.map((h) => [h.endpointId, h.orderingKey])).toEqual([
        [one!.id, "a"],
        [one!.id, "b"],
        [two!.id, "a"],
        [two!.id, "b"],
      ]);
      expect(all[0]!.waiting).toBe(1);
      const page = await ordering.listHeldKeys({
        limit: 2,
        after: { endpointId: one!.id, orderingKey: "b" },
      });
      expect(page.map((h) => [h.endpointId, h.orderingKey])).toEqual([
        [two!.id, "a"],
        [two!.id, "b"],
      ]);
      expect(await ordering.listHeldKeys({ endpointId: two!.id, limit: 10 })).toHaveLength(2);
      expect(first.deliveries).toHaveLength(4);
    });

    test("recordFanout records a keyed message only after the earlier ones of its key; a refused one waits a moment", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const m1 = newMessage({ orderingKey: "k" });
      const m2 = newMessage({ orderingKey: "k" });
      const m3 = newMessage({ orderingKey: "other" });
      for (const m of [m1, m2, m3]) await storage.enqueue(m);
      const claimed = await storage.claimFanout(lease(T0, { limit: 10 }));
      const token = new Map(claimed.map((c) => [c.message.id, c.token]));
      const result = (message: typeof m1) => ({
        messageId: message.id,
        token: token.get(message.id)!,
        orderingKey: message.orderingKey!,
        deliveries: [
          {
            id: nextId("dlv"),
            messageId: message.id,
            endpointId: endpoint!.id,
            webhookId: message.id,
            createdAt: T0,
            orderingKey: message.orderingKey!,
          },
        ],
      });
      // m2 before m1 (another worker holds m1): nothing is written for m2; m3's key is free.
      const [r1, r2, r3] = [result(m1), result(m2), result(m3)];
      await storage.recordFanout([r2, r3], T0);
      expect(await storage.listDeliveries(m2.id)).toEqual([]);
      expect((await storage.getMessage(m2.id))!.fannedOutAt).toBeNull();
      expect(await statuses(storage, r3.deliveries)).toEqual(["pending"]);
      // Its old token fences nothing now, and it is claimed again only after REFUSED_FANOUT_RETRY_MS.
      await storage.recordFanout([r2], T0 + 1);
      expect(await storage.listDeliveries(m2.id)).toEqual([]);
      expect(await storage.claimFanout(lease(T0 + REFUSED_FANOUT_RETRY_MS - 1, { limit: 10 }))).toEqual([]);
      await storage.recordFanout([r1], T0 + 2);
      const again = await storage.claimFanout(lease(T0 + REFUSED_FANOUT_RETRY_MS, { limit: 10 }));
      expect(again.map((c) => c.message.id)).toEqual([m2.id]);
      await storage.recordFanout([{ ...result(m2), token: again[0]!.token }], T0 + REFUSED_FANOUT_RETRY_MS);
      const rows = [(await storage.listDeliveries(m1.id))[0]!, (await storage.listDeliveries(m2.id))[0]!];
      expect(rows.map((d) => d.status)).toEqual(["pending", "waiting"]);
    });

    test("recordFanout in one call: the key's earliest message goes first whatever the results' order; only heads come back leased", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const messages = [newMessage({ orderingKey: "k" }), newMessage({ orderingKey: "k" }), newMessage()];
      for (const m of messages) await storage.enqueue(m);
      const claimed = await storage.claimFanout(lease(T0, { limit: 10 }));
      const results = claimed.map(({ message, token }) => {
        const key = message.orderingKey;
        const delivery = {
          id: nextId("dlv"),
          messageId: message.id,
          endpointId: endpoint!.id,
          webhookId: message.id,
          createdAt: T0,
          ...(key === undefined ? {} : { orderingKey: key }),
        };
        return {
          messageId: message.id,
          token,
          deliveries: [delivery],
          ...(key === undefined ? {} : { orderingKey: key }),
        };
      });
      const leased = await storage.recordFanout([...results].reverse(), T0, {
        owner: "worker-1",
        until: T0 + LEASE_MS,
      });
      const byMessage = (i: number) => results.find((r) => r.messageId === messages[i]!.id)!.deliveries[0]!;
      expect(leased.map((c) => c.delivery.id).sort()).toEqual([byMessage(0).id, byMessage(2).id].sort());
      expect(await statuses(storage, [byMessage(0), byMessage(1), byMessage(2)])).toEqual([
        "pending",
        "waiting",
        "pending",
      ]);
    });

    test("replay keeps its place: a held head replayed goes first, then the ones that waited", async (t) => {
      const replay = t.needs("replay");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }],
      });
      const [head, next] = deliveries;
      let claims = await claimAll(storage, T0);
      await end(storage, claims.get(head!.id)!, { kind: "dead-lettered" }, T0, true);
      expect(await replay.resetDeliveries([{ deliveryId: head!.id, webhookId: "wh_again" }], T0 + 1)).toEqual(
        [head!.id],
      );
      expect(await storage.ordering!.listHeldKeys({ limit: 10 })).toEqual([]);
      claims = await claimAll(storage, T0 + 1);
      expect([...claims.keys()]).toEqual([head!.id]);
      await end(storage, claims.get(head!.id)!, { kind: "succeeded" }, T0 + 1);
      expect(await claimedIds(storage, T0 + 1)).toEqual([next!.id]);
    });

    test("replay of a keyed delivery while its key has a head: it waits, then goes before later messages", async (t) => {
      const replay = t.needs("replay");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }, { orderingKey: "k" }],
      });
      const [d1, d2, d3] = deliveries;
      let claims = await claimAll(storage, T0);
      await end(storage, claims.get(d1!.id)!, { kind: "succeeded" }, T0);
      claims = await claimAll(storage, T0);
      expect([...claims.keys()]).toEqual([d2!.id]);
      await replay.resetDeliveries([{ deliveryId: d1!.id, webhookId: "wh_1" }], T0 + 1);
      expect(await statuses(storage, [d1!, d2!, d3!])).toEqual(["waiting", "pending", "waiting"]);
      await end(storage, claims.get(d2!.id)!, { kind: "succeeded" }, T0 + 2);
      expect(await claimedIds(storage, T0 + 2)).toEqual([d1!.id]);
    });

    test("deleteEndpoint cancels waiting deliveries and releases the endpoint's held keys", async () => {
      const storage = context.storage();
      const [endpoint, other] = await createEndpoints(storage, 2);
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: [endpoint!, other!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }, { orderingKey: "j" }, { orderingKey: "j" }],
      });
      const claims = await claimAll(storage, T0);
      const jHead = deliveries[4]!;
      await end(storage, claims.get(jHead.id)!, { kind: "dead-lettered" }, T0, true);
      expect(await storage.deleteEndpoint(endpoint!.id, T0 + 1)).toBe(true);
      const mine = deliveries.filter((d) => d.endpointId === endpoint!.id);
      expect(await statuses(storage, mine)).toEqual(["cancelled", "cancelled", "dead-lettered", "cancelled"]);
      expect(await storage.ordering!.listHeldKeys({ limit: 10 })).toEqual([]);
      // The other endpoint's keys go on as before.
      expect(
        await statuses(
          storage,
          deliveries.filter((d) => d.endpointId === other!.id),
        ),
      ).toEqual(["pending", "waiting", "pending", "waiting"]);
      expect((await storage.getMessage(messages[0]!.id))!.status).toBe("pending");
    });

    test("a message is finished only when its waiting deliveries are done; one holding its key is never pruned", async (t) => {
      t.needs("retention");
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ orderingKey: "k" }, { orderingKey: "k" }, { orderingKey: "j" }],
      });
      let claims = await claimAll(storage, T0);
      await end(storage, claims.get(deliveries[0]!.id)!, { kind: "succeeded" }, T0);
      await end(storage, claims.get(deliveries[2]!.id)!, { kind: "dead-lettered" }, T0, true);
      expect((await storage.getMessage(messages[1]!.id))!.status).toBe("pending");
      claims = await claimAll(storage, T0);
      await end(storage, claims.get(deliveries[1]!.id)!, { kind: "succeeded" }, T0);
      expect((await storage.getMessage(messages[2]!.id))!.status).toBe("dead-lettered");
      const pruned = await pruneAll(storage, T0 + 2 * DAY, 100);
      expect(pruned.messages).toBe(2);
      expect(await storage.getMessage(messages[2]!.id)).not.toBeNull();
      expect(await storage.ordering!.listHeldKeys({ limit: 10 })).toHaveLength(1);
    });
  });
}
