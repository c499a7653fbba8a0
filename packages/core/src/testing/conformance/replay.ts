import { expect } from "vitest";
import { type ConformanceContext, group } from "./context.js";
import {
  claimAll,
  claimOne,
  createEndpoints,
  deliveryRow,
  fanOut,
  ids,
  lease,
  nextId,
  settle,
  T0,
} from "./fixtures.js";

/** `findReplayable` and `resetDeliveries`. */
export function replayTests(context: ConformanceContext): void {
  group(context, "replay", (test) => {
    test("findReplayable by messageIds returns only succeeded, failed, dead-lettered and expired deliveries", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 7);
      const { messages, deliveries } = await fanOut(storage, { endpoints });
      const claimed = await claimAll(storage, T0);
      const kinds = ["succeeded", "failed", "dead-lettered", "expired", "held", "cancelled"] as const;
      for (const [i, kind] of kinds.entries())
        await settle(storage, claimed.get(deliveries[i]!.id)!, { kind }, T0);
      // deliveries[6] stays pending (leased).
      const found = await storage.replay!.findReplayable(
        { messageIds: [messages[0]!.id, "msg_unknown"] },
        100,
      );
      expect(ids(found)).toEqual(ids(deliveries.slice(0, 4)));
      expect(found.find((d) => d.id === deliveries[2]!.id)).toMatchObject({
        status: "dead-lettered",
        attemptsMade: 1,
      });
    });

    test("findReplayable by messageIds and endpointId selects only that endpoint's delivery of each message", async () => {
      const storage = context.storage();
      const [target, other] = await createEndpoints(storage, 2);
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: [target!, other!],
        messages: [{ createdAt: T0 }, { createdAt: T0 + 1 }],
      });
      const claimed = await claimAll(storage, T0);
      for (const delivery of deliveries)
        await settle(storage, claimed.get(delivery.id)!, { kind: "dead-lettered" }, T0);
      const found = await storage.replay!.findReplayable(
        { messageIds: messages.map((m) => m.id), endpointId: target!.id },
        100,
      );
      expect(ids(found)).toEqual(ids(deliveries.filter((d) => d.endpointId === target!.id)));
      // The limit counts that endpoint's deliveries only.
      const first = await storage.replay!.findReplayable(
        { messageIds: messages.map((m) => m.id), endpointId: target!.id },
        1,
      );
      expect(first).toHaveLength(1);
      expect(first[0]!.endpointId).toBe(target!.id);
    });

    test("findReplayable by endpoint selects deliveries whose message was created in [since, until)", async () => {
      const storage = context.storage();
      const [target, other] = await createEndpoints(storage, 2);
      const since = T0 + 10_000;
      const until = T0 + 20_000;
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: [target!, other!],
        messages: [
          { createdAt: since - 1 },
          { createdAt: since },
          { createdAt: until - 1 },
          { createdAt: until },
        ],
        now: T0 + 30_000,
      });
      const claimed = await claimAll(storage, T0 + 30_000);
      for (const delivery of deliveries)
        await settle(storage, claimed.get(delivery.id)!, { kind: "dead-lettered" }, T0 + 30_000);
      const found = await storage.replay!.findReplayable({ endpointId: target!.id, since, until }, 100);
      const expected = deliveries.filter(
        (d) =>
          d.endpointId === target!.id && (d.messageId === messages[1]!.id || d.messageId === messages[2]!.id),
      );
      expect(ids(found)).toEqual(ids(expected));
    });

    test("findReplayable filters by status before its limit: one failure among many successes is found", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { messages, deliveries } = await fanOut(storage, { endpoints: [endpoint!], messages: 5 });
      const claimed = await claimAll(storage, T0);
      const kinds = ["succeeded", "succeeded", "succeeded", "dead-lettered", "failed"] as const;
      for (const [i, kind] of kinds.entries())
        await settle(storage, claimed.get(deliveries[i]!.id)!, { kind }, T0);
      const statuses: ("failed" | "dead-lettered")[] = ["failed", "dead-lettered"];
      const byEndpoint = await storage.replay!.findReplayable(
        { endpointId: endpoint!.id, since: T0, until: T0 + 1, statuses },
        2,
      );
      expect(ids(byEndpoint)).toEqual(ids(deliveries.slice(3)));
      const byMessage = await storage.replay!.findReplayable(
        { messageIds: messages.map((m) => m.id), statuses: ["failed"] },
        1,
      );
      expect(ids(byMessage)).toEqual([deliveries[4]!.id]);
    });

    test("findReplayable returns at most `limit` deliveries", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { messages, deliveries } = await fanOut(storage, { endpoints: [endpoint!], messages: 3 });
      const claimed = await claimAll(storage, T0);
      for (const delivery of deliveries)
        await settle(storage, claimed.get(delivery.id)!, { kind: "succeeded" }, T0);
      const byEndpoint = await storage.replay!.findReplayable(
        { endpointId: endpoint!.id, since: T0, until: T0 + 1 },
        2,
      );
      expect(byEndpoint).toHaveLength(2);
      const byMessage = await storage.replay!.findReplayable({ messageIds: messages.map((m) => m.id) }, 2);
      expect(byMessage).toHaveLength(2);
      for (const found of [...byEndpoint, ...byMessage]) expect(ids(deliveries)).toContain(found.id);
    });

    test("resetDeliveries puts a delivery back: pending, due now, retries and lease cleared, the new webhookId; its message pending again", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { messages, deliveries } = await fanOut(storage, { endpoints });
      const claimed = await claimAll(storage, T0);
      await settle(
        storage,
        claimed.get(deliveries[0]!.id)!,
        { kind: "retry", nextAttemptAt: T0 + 1, retriesUsed: 1 },
        T0,
      );
      const retried = await claimOne(storage, deliveries[0]!.id, T0 + 1);
      await settle(storage, retried, { kind: "dead-lettered" }, T0 + 2);
      await settle(storage, claimed.get(deliveries[1]!.id)!, { kind: "succeeded" }, T0 + 2);
      expect((await storage.getMessage(messages[0]!.id))?.status).toBe("dead-lettered");

      const now = T0 + 86_400_000;
      const webhookId = nextId("wh");
      expect(
        await storage.replay!.resetDeliveries([{ deliveryId: deliveries[0]!.id, webhookId }], now),
      ).toEqual([deliveries[0]!.id]);
      expect(await deliveryRow(storage, deliveries[0]!)).toMatchObject({
        status: "pending",
        nextAttemptAt: now,
        retriesUsed: 0,
        leaseToken: null,
        leaseOwner: null,
        webhookId,
      });
      expect((await deliveryRow(storage, deliveries[1]!)).status).toBe("succeeded");
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "pending",
        finishedAt: null,
        fannedOutAt: T0,
      });
      expect(await storage.claimFanout(lease(now))).toEqual([]);
      const [due] = await storage.claimDue(lease(now));
      expect(due?.delivery).toMatchObject({ id: deliveries[0]!.id, webhookId });
      await settle(storage, due!, { kind: "succeeded" }, now + 5);
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "dispatched",
        finishedAt: now + 5,
      });
      const trail = await storage.operations!.listAttempts(messages[0]!.id);
      expect(trail).toHaveLength(4);
      // Each attempt keeps the webhook id it was sent under: the replay's is the new one.
      expect(
        trail.filter((a) => a.deliveryId === deliveries[0]!.id).map((a) => [a.attemptNumber, a.webhookId]),
      ).toEqual([
        [1, deliveries[0]!.webhookId],
        [2, deliveries[0]!.webhookId],
        [3, webhookId],
      ]);
    });

    test("resetDeliveries skips deliveries that are not terminal (pending, held, already reset) or unknown, and does not return them", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 3);
      const { messages, deliveries } = await fanOut(storage, { endpoints });
      const claimed = await claimAll(storage, T0);
      const [terminal, parked, inFlight] = deliveries;
      await settle(storage, claimed.get(terminal!.id)!, { kind: "failed" }, T0);
      await settle(storage, claimed.get(parked!.id)!, { kind: "held" }, T0);
      const reset = (deliveryId: string) => ({ deliveryId, webhookId: nextId("wh") });
      expect(await storage.replay!.resetDeliveries([reset(terminal!.id)], T0 + 1)).toEqual([terminal!.id]);
      expect(
        await storage.replay!.resetDeliveries(
          [reset(terminal!.id), reset(parked!.id), reset(inFlight!.id), reset("dlv_unknown")],
          T0 + 2,
        ),
      ).toEqual([]);
      expect(await deliveryRow(storage, terminal!)).toMatchObject({
        status: "pending",
        nextAttemptAt: T0 + 1,
      });
      expect(await deliveryRow(storage, parked!)).toMatchObject({
        status: "held",
        webhookId: parked!.webhookId,
      });
      expect(await deliveryRow(storage, inFlight!)).toMatchObject({
        leaseToken: claimed.get(inFlight!.id)!.leaseToken,
        webhookId: inFlight!.webhookId,
      });
      expect((await storage.getMessage(messages[0]!.id))?.status).toBe("pending");
    });

    test("a cancelled delivery is neither replayable nor reset", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { messages, deliveries } = await fanOut(storage, { endpoints: [endpoint!] });
      await storage.deleteEndpoint(endpoint!.id, T0 + 1);
      expect(await storage.replay!.findReplayable({ messageIds: [messages[0]!.id] }, 10)).toEqual([]);
      expect(
        await storage.replay!.resetDeliveries(
          [{ deliveryId: deliveries[0]!.id, webhookId: nextId("wh") }],
          T0 + 2,
        ),
      ).toEqual([]);
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 1,
      });
    });
  });
}
