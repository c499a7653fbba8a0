import { expect } from "vitest";
import type { DeadLetter } from "../../storage/records.js";
import type { MessageQuery } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import {
  attemptFor,
  claimAll,
  claimOne,
  createEndpoints,
  fanOut,
  newMessage,
  settle,
  T0,
} from "./fixtures.js";

/** Audit reads: message listing, deliveries, dead letters and counts. */
export function auditTests(context: ConformanceContext): void {
  group(context, "audit", (test) => {
    test("listMessages returns messages newest first, every field included", async () => {
      const storage = context.storage();
      const messages = [0, 1, 2].map((i) => newMessage({ createdAt: T0 + i }));
      for (const message of messages) await storage.enqueue(message);
      expect(await storage.operations!.listMessages({ limit: 10 })).toEqual(
        [...messages]
          .reverse()
          .map((m) => ({ ...m, status: "pending", fannedOutAt: null, finishedAt: null })),
      );
    });

    test("listMessages filters by status, type and tenantId", async () => {
      const storage = context.storage();
      const a = newMessage({ type: "order.created", tenantId: "t1", createdAt: T0 });
      const b = newMessage({ type: "order.paid", tenantId: "t1", createdAt: T0 + 1 });
      const c = newMessage({ type: "order.created", tenantId: "t2", createdAt: T0 + 2 });
      const d = newMessage({ type: "order.created", tenantId: null, createdAt: T0 + 3 });
      await fanOut(storage, { endpoints: [], messages: [d] }); // no endpoint matched: dispatched
      for (const message of [a, b, c]) await storage.enqueue(message);
      const list = async (query: Partial<MessageQuery>) =>
        (await storage.operations!.listMessages({ limit: 10, ...query })).map((m) => m.id);
      expect(await list({ type: "order.created" })).toEqual([d.id, c.id, a.id]);
      expect(await list({ tenantId: "t1" })).toEqual([b.id, a.id]);
      expect(await list({ status: "dispatched" })).toEqual([d.id]);
      expect(await list({ status: "pending", type: "order.created", tenantId: "t2" })).toEqual([c.id]);
      expect(await list({ status: "dead-lettered" })).toEqual([]);
    });

    test("listMessages `since` is inclusive and `until` exclusive on createdAt", async () => {
      const storage = context.storage();
      const messages = [0, 1, 2, 3].map((i) => newMessage({ createdAt: T0 + i * 1_000 }));
      for (const message of messages) await storage.enqueue(message);
      const listed = await storage.operations!.listMessages({
        limit: 10,
        since: T0 + 1_000,
        until: T0 + 3_000,
      });
      expect(listed.map((m) => m.id)).toEqual([messages[2]!.id, messages[1]!.id]);
    });

    test("listMessages pages with `limit` and an exclusive `after` id (newest-first order), also under a filter", async () => {
      const storage = context.storage();
      const messages = [0, 1, 2, 3, 4].map((i) =>
        newMessage({ createdAt: T0 + i, type: i === 2 ? "other" : "order.created" }),
      );
      for (const message of messages) await storage.enqueue(message);
      const page = async (query: Partial<MessageQuery>) =>
        (await storage.operations!.listMessages({ limit: 2, ...query })).map((m) => m.id);
      const [m0, m1, m2, m3, m4] = messages.map((m) => m.id);
      expect(await page({})).toEqual([m4, m3]);
      expect(await page({ after: m3 })).toEqual([m2, m1]);
      expect(await page({ after: m1 })).toEqual([m0]);
      expect(await page({ after: m0 })).toEqual([]);
      expect(await page({ type: "order.created", after: m3 })).toEqual([m1, m0]);
    });

    test("listDeliveries returns a message's deliveries oldest first, and nothing for an unknown message", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 3);
      const { messages, deliveries } = await fanOut(storage, { endpoints, messages: 2 });
      const ofFirst = deliveries.filter((d) => d.messageId === messages[0]!.id).map((d) => d.id);
      expect((await storage.listDeliveries(messages[0]!.id)).map((d) => d.id)).toEqual(ofFirst);
      expect(await storage.listDeliveries("msg_unknown")).toEqual([]);
      expect(await storage.operations!.listAttempts(messages[0]!.id)).toEqual([]);
    });

    test("listDeadLetters lists dead-lettered deliveries newest first (by delivery id), per endpoint, with paging", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints, messages: 3 });
      const claimed = await claimAll(storage, T0);
      const [kept] = deliveries.splice(3, 1); // message 1 → endpoint 1 succeeds
      await settle(storage, claimed.get(kept!.id)!, { kind: "succeeded" }, T0 + 1);
      for (const delivery of deliveries)
        await settle(storage, claimed.get(delivery.id)!, { kind: "dead-lettered" }, T0 + 1);

      const ids = (rows: DeadLetter[]) => rows.map((d) => d.deliveryId);
      const newestFirst = deliveries.map((d) => d.id).reverse();
      expect(ids(await storage.operations!.listDeadLetters({ limit: 10 }))).toEqual(newestFirst);
      const onFirst = newestFirst.filter(
        (id) => deliveries.find((d) => d.id === id)!.endpointId === endpoints[0]!.id,
      );
      expect(
        ids(await storage.operations!.listDeadLetters({ limit: 10, endpointId: endpoints[0]!.id })),
      ).toEqual(onFirst);
      const firstPage = await storage.operations!.listDeadLetters({ limit: 2 });
      expect(ids(firstPage)).toEqual(newestFirst.slice(0, 2));
      const secondPage = await storage.operations!.listDeadLetters({
        limit: 2,
        after: firstPage[1]!.deliveryId,
      });
      expect(ids(secondPage)).toEqual(newestFirst.slice(2, 4));
    });

    test("listDeadLetters gives each dead letter its message's type, tenant and creation time, its attempts, last error and dead-lettering time", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { messages, deliveries } = await fanOut(storage, {
        endpoints: [endpoint!],
        messages: [{ type: "invoice.paid", tenantId: "t1", createdAt: T0 - 5_000 }],
      });
      const claimed = await claimOne(storage, deliveries[0]!.id, T0);
      await storage.recordOutcomes(
        [
          {
            deliveryId: claimed.delivery.id,
            leaseToken: claimed.leaseToken,
            transition: { kind: "dead-lettered" },
            attempt: attemptFor(claimed, { startedAt: T0, outcome: "retryable", statusCode: 503 }),
            lastError: "HTTP 503",
          },
        ],
        T0 + 7,
      );
      expect(await storage.operations!.listDeadLetters({ limit: 10 })).toEqual([
        {
          status: "dead-lettered",
          deliveryId: deliveries[0]!.id,
          messageId: messages[0]!.id,
          endpointId: endpoint!.id,
          webhookId: deliveries[0]!.webhookId,
          type: "invoice.paid",
          tenantId: "t1",
          attemptsMade: 1,
          lastError: "HTTP 503",
          createdAt: T0 - 5_000,
          deadLetteredAt: T0 + 7,
        },
      ]);
    });

    test("listDeadLetters with status failed lists the permanently failed deliveries, apart from the dead letters, with paging and filters", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints, messages: 4 });
      const claimed = await claimAll(storage, T0);
      // Alternate: failed, dead-lettered, failed, ... and one success that is in neither list.
      const [kept] = deliveries.splice(0, 1);
      await settle(storage, claimed.get(kept!.id)!, { kind: "succeeded" }, T0 + 1);
      for (const [i, delivery] of deliveries.entries())
        await settle(
          storage,
          claimed.get(delivery.id)!,
          { kind: i % 2 === 0 ? "failed" : "dead-lettered" },
          T0 + 10 + i,
        );
      const failed = deliveries.filter((_, i) => i % 2 === 0);
      const dead = deliveries.filter((_, i) => i % 2 === 1);
      const ids = (rows: DeadLetter[]) => rows.map((d) => d.deliveryId);
      const listedFailed = await storage.operations!.listDeadLetters({ limit: 10, status: "failed" });
      expect(ids(listedFailed)).toEqual(failed.map((d) => d.id).reverse());
      expect(listedFailed.every((d) => d.status === "failed")).toBe(true);
      const listedDead = await storage.operations!.listDeadLetters({ limit: 10 });
      expect(ids(listedDead)).toEqual(dead.map((d) => d.id).reverse());
      expect(listedDead.every((d) => d.status === "dead-lettered")).toBe(true);
      expect(ids(await storage.operations!.listDeadLetters({ limit: 10, status: "dead-lettered" }))).toEqual(
        ids(listedDead),
      );

      const newestFailed = failed.map((d) => d.id).reverse();
      const firstPage = await storage.operations!.listDeadLetters({ limit: 2, status: "failed" });
      expect(ids(firstPage)).toEqual(newestFailed.slice(0, 2));
      const rest = await storage.operations!.listDeadLetters({
        limit: 10,
        status: "failed",
        after: firstPage[1]!.deliveryId,
      });
      expect(ids(rest)).toEqual(newestFailed.slice(2));
      const onFirst = newestFailed.filter(
        (id) => failed.find((d) => d.id === id)!.endpointId === endpoints[0]!.id,
      );
      expect(
        ids(
          await storage.operations!.listDeadLetters({
            limit: 10,
            status: "failed",
            endpointId: endpoints[0]!.id,
          }),
        ),
      ).toEqual(onFirst);
      const first = failed[0]!;
      const inRange = await storage.operations!.listDeadLetters({
        limit: 10,
        status: "failed",
        since: T0 + 10,
        until: T0 + 11,
      });
      expect(ids(inRange)).toEqual([first.id]);
    });

    test("listDeadLetters `since` is inclusive and `until` exclusive on deadLetteredAt; a deleted endpoint's dead letters stay listed", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, { endpoints: [endpoint!], messages: 4 });
      const claimed = await claimAll(storage, T0);
      for (const [i, delivery] of deliveries.entries())
        await settle(storage, claimed.get(delivery.id)!, { kind: "dead-lettered" }, T0 + i * 1_000);
      await storage.deleteEndpoint(endpoint!.id, T0 + 10_000);
      const listed = await storage.operations!.listDeadLetters({
        limit: 10,
        endpointId: endpoint!.id,
        since: T0 + 1_000,
        until: T0 + 3_000,
      });
      expect(listed.map((d) => d.deliveryId)).toEqual([deliveries[2]!.id, deliveries[1]!.id]);
    });
  });
}
