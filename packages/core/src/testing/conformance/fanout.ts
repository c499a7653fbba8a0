import { expect } from "vitest";
import { type ConformanceContext, group } from "./context.js";
import { createEndpoints, ids, LEASE_MS, lease, newMessage, nextId, T0 } from "./fixtures.js";

/** `claimFanout` and `recordFanout`. */
export function fanoutTests(context: ConformanceContext): void {
  group(context, "fanout", (test) => {
    test("claimFanout leases pending messages that were not fanned out, oldest first", async () => {
      const storage = context.storage();
      const newest = newMessage({ createdAt: T0 + 2 });
      const oldest = newMessage({ createdAt: T0 });
      const middle = newMessage({ createdAt: T0 + 1 });
      for (const message of [newest, oldest, middle]) await storage.enqueue(message);
      const claimed = await storage.claimFanout(lease(T0 + 10));
      expect(claimed.map((claim) => claim.message.id)).toEqual([oldest.id, middle.id, newest.id]);
      expect(claimed[0]!.message).toEqual({
        ...oldest,
        status: "pending",
        fannedOutAt: null,
        finishedAt: null,
      });
      expect(new Set(claimed.map((claim) => claim.token)).size).toBe(3);
    });

    test("claimFanout returns at most `limit` messages", async () => {
      const storage = context.storage();
      const messages = [0, 1, 2, 3].map((i) => newMessage({ createdAt: T0 + i }));
      for (const message of messages) await storage.enqueue(message);
      const first = await storage.claimFanout(lease(T0, { limit: 3 }));
      expect(first.map((claim) => claim.message.id)).toEqual(messages.slice(0, 3).map((m) => m.id));
      const rest = await storage.claimFanout(lease(T0, { limit: 3 }));
      expect(rest.map((claim) => claim.message.id)).toEqual([messages[3]!.id]);
    });

    test("claimFanout with `newest` takes the newest messages since `since` first, then the oldest, up to `limit`", async () => {
      const storage = context.storage();
      const messages = Array.from({ length: 10 }, (_, i) => newMessage({ createdAt: T0 + i * 1_000 }));
      for (const message of messages) await storage.enqueue(message);
      const at = (indexes: number[]) => indexes.map((i) => messages[i]!.id);
      const claimed = await storage.claimFanout(
        lease(T0 + 20_000, { limit: 4, newest: { since: T0 + 5_000, limit: 2 } }),
      );
      // Oldest first in the result, whichever end each came from.
      expect(claimed.map((c) => c.message.id)).toEqual(at([0, 1, 8, 9]));
      // Nothing newer than `since` left: the whole claim is oldest first.
      const next = await storage.claimFanout(
        lease(T0 + 20_000, { limit: 3, newest: { since: T0 + 9_000, limit: 2 } }),
      );
      expect(next.map((c) => c.message.id)).toEqual(at([2, 3, 4]));
      // Few messages left: both ends find the same ones, each is claimed once.
      const rest = await storage.claimFanout(
        lease(T0 + 20_000, { limit: 10, newest: { since: T0, limit: 5 } }),
      );
      expect(rest.map((c) => c.message.id)).toEqual(at([5, 6, 7]));
    });

    test("claimFanout with `newest.only` takes only the newest messages since `since`, none from the oldest end", async () => {
      const storage = context.storage();
      const messages = Array.from({ length: 10 }, (_, i) => newMessage({ createdAt: T0 + i * 1_000 }));
      for (const message of messages) await storage.enqueue(message);
      const at = (indexes: number[]) => indexes.map((i) => messages[i]!.id);
      const claimed = await storage.claimFanout(
        lease(T0 + 20_000, { limit: 2, newest: { since: T0 + 5_000, limit: 2, only: true } }),
      );
      expect(claimed.map((c) => c.message.id)).toEqual(at([8, 9]));
      // Fewer new messages than the limit: the claim stays short, the older ones stay claimable.
      const rest = await storage.claimFanout(
        lease(T0 + 20_000, { limit: 8, newest: { since: T0 + 5_000, limit: 8, only: true } }),
      );
      expect(rest.map((c) => c.message.id)).toEqual(at([5, 6, 7]));
      const none = await storage.claimFanout(
        lease(T0 + 20_000, { limit: 8, newest: { since: T0 + 5_000, limit: 8, only: true } }),
      );
      expect(none).toEqual([]);
      const oldest = await storage.claimFanout(lease(T0 + 20_000, { limit: 8 }));
      expect(oldest.map((c) => c.message.id)).toEqual(at([0, 1, 2, 3, 4]));
    });

    test("a leased message is not claimable again until its lease expires", async () => {
      const storage = context.storage();
      await storage.enqueue(newMessage());
      expect(await storage.claimFanout(lease(T0))).toHaveLength(1);
      expect(await storage.claimFanout(lease(T0 + LEASE_MS - 1))).toEqual([]);
    });

    test("after the lease expires another claimer gets the message with a new token", async () => {
      const storage = context.storage();
      const message = newMessage();
      await storage.enqueue(message);
      const [first] = await storage.claimFanout(lease(T0));
      const [second] = await storage.claimFanout(lease(T0 + LEASE_MS + 1, { owner: "worker-2" }));
      expect(second?.message.id).toBe(message.id);
      expect(second?.token).not.toBe(first?.token);
    });

    test("recordFanout with a lease leases every delivery except the queued ones, which are due now and unleased", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 3);
      const message = newMessage();
      await storage.enqueue(message);
      const [claim] = await storage.claimFanout(lease(T0));
      const deliveries = endpoints.map((endpoint, i) => ({
        id: nextId("dlv"),
        messageId: message.id,
        endpointId: endpoint.id,
        webhookId: message.id,
        createdAt: T0,
        ...(i === 1 ? { queued: true } : {}),
      }));
      const leased = await storage.recordFanout(
        [{ messageId: message.id, token: claim!.token, deliveries }],
        T0 + 5,
        { owner: "worker-1", until: T0 + 5 + LEASE_MS },
      );
      expect(leased.map((c) => c.delivery.id).sort()).toEqual([deliveries[0]!.id, deliveries[2]!.id].sort());
      expect(leased.every((c) => c.message.payload === message.payload)).toBe(true);
      const rows = new Map((await storage.listDeliveries(message.id)).map((d) => [d.id, d]));
      expect(rows.get(deliveries[1]!.id)).toMatchObject({
        status: "pending",
        leaseToken: null,
        leaseOwner: null,
        nextAttemptAt: T0 + 5,
      });
      expect(rows.get(deliveries[0]!.id)).toMatchObject({
        leaseOwner: "worker-1",
        nextAttemptAt: T0 + 5 + LEASE_MS,
      });
      const due = await storage.claimDue(lease(T0 + 5));
      expect(due.map((c) => c.delivery.id)).toEqual([deliveries[1]!.id]);
    });

    test("recordFanout with a stale token writes nothing, and the current holder still can", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const message = newMessage();
      await storage.enqueue(message);
      const [stale] = await storage.claimFanout(lease(T0));
      const [current] = await storage.claimFanout(lease(T0 + LEASE_MS + 1));
      const delivery = (token: string) => ({
        messageId: message.id,
        token,
        deliveries: [
          {
            id: nextId("dlv"),
            messageId: message.id,
            endpointId: endpoint!.id,
            webhookId: nextId("wh"),
            createdAt: T0,
          },
        ],
      });
      await storage.recordFanout([delivery(stale!.token)], T0 + LEASE_MS + 2);
      expect((await storage.getMessage(message.id))?.fannedOutAt).toBeNull();
      expect(await storage.listDeliveries(message.id)).toEqual([]);

      await storage.recordFanout([delivery(current!.token)], T0 + LEASE_MS + 3);
      expect((await storage.getMessage(message.id))?.fannedOutAt).toBe(T0 + LEASE_MS + 3);
      expect(await storage.listDeliveries(message.id)).toHaveLength(1);
    });

    test("recordFanout inserts pending deliveries due now with retriesUsed 0 and the given webhookId, and marks the message fanned out", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const message = newMessage();
      await storage.enqueue(message);
      const [claim] = await storage.claimFanout(lease(T0));
      const now = T0 + 5;
      const deliveries = endpoints.map((endpoint) => ({
        id: nextId("dlv"),
        messageId: message.id,
        endpointId: endpoint.id,
        webhookId: nextId("wh"),
        createdAt: now,
      }));
      expect(
        await storage.recordFanout([{ messageId: message.id, token: claim!.token, deliveries }], now),
      ).toEqual([]);
      expect(await storage.listDeliveries(message.id)).toEqual(
        deliveries.map((delivery) => ({
          ...delivery,
          status: "pending",
          retriesUsed: 0,
          attemptsMade: 0,
          nextAttemptAt: now,
          leaseToken: null,
          leaseOwner: null,
          lastError: null,
          updatedAt: now,
        })),
      );
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "pending",
        fannedOutAt: now,
        finishedAt: null,
      });
      expect(ids((await storage.claimDue(lease(now))).map((claim) => claim.delivery))).toEqual(
        ids(deliveries),
      );
    });

    test("a fanned-out message is never claimed for fan-out again", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const message = newMessage();
      await storage.enqueue(message);
      const [claim] = await storage.claimFanout(lease(T0));
      const deliveries = [
        {
          id: nextId("dlv"),
          messageId: message.id,
          endpointId: endpoint!.id,
          webhookId: nextId("wh"),
          createdAt: T0,
        },
      ];
      await storage.recordFanout([{ messageId: message.id, token: claim!.token, deliveries }], T0);
      expect(await storage.claimFanout(lease(T0 + 10 * LEASE_MS))).toEqual([]);
    });

    test("recordFanout with zero deliveries marks the message dispatched with finishedAt", async () => {
      const storage = context.storage();
      const message = newMessage();
      await storage.enqueue(message);
      const [claim] = await storage.claimFanout(lease(T0));
      await storage.recordFanout([{ messageId: message.id, token: claim!.token, deliveries: [] }], T0 + 7);
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "dispatched",
        fannedOutAt: T0 + 7,
        finishedAt: T0 + 7,
      });
      expect(await storage.claimFanout(lease(T0 + 10 * LEASE_MS))).toEqual([]);
    });

    test("recordFanout with expired: true marks the message expired with finishedAt and no deliveries", async () => {
      const storage = context.storage();
      const message = newMessage({ expiresAt: T0 + 1 });
      await storage.enqueue(message);
      const [claim] = await storage.claimFanout(lease(T0 + 2));
      await storage.recordFanout(
        [{ messageId: message.id, token: claim!.token, deliveries: [], expired: true }],
        T0 + 3,
      );
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "expired",
        fannedOutAt: T0 + 3,
        finishedAt: T0 + 3,
      });
      expect(await storage.listDeliveries(message.id)).toEqual([]);
      expect(await storage.claimFanout(lease(T0 + 10 * LEASE_MS))).toEqual([]);
    });

    test("recordFanout with `lease` returns the new deliveries already leased, so claimDue skips them until the lease ends", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const message = newMessage();
      await storage.enqueue(message);
      const [claim] = await storage.claimFanout(lease(T0));
      const deliveries = endpoints.map((endpoint) => ({
        id: nextId("dlv"),
        messageId: message.id,
        endpointId: endpoint.id,
        webhookId: nextId("wh"),
        createdAt: T0,
      }));
      const until = T0 + LEASE_MS;
      const leased = await storage.recordFanout(
        [{ messageId: message.id, token: claim!.token, deliveries }],
        T0,
        {
          owner: "worker-1",
          until,
        },
      );
      expect(ids(leased.map((claimed) => claimed.delivery))).toEqual(ids(deliveries));
      for (const claimed of leased) {
        expect(claimed.delivery).toMatchObject({
          status: "pending",
          leaseToken: claimed.leaseToken,
          leaseOwner: "worker-1",
          nextAttemptAt: until,
        });
        expect(claimed.message).toMatchObject({ id: message.id, payload: message.payload, fannedOutAt: T0 });
      }
      expect(await storage.claimDue(lease(T0))).toEqual([]);
      expect(await storage.claimDue(lease(until - 1))).toEqual([]);
      expect(await storage.claimDue(lease(until))).toHaveLength(2);
    });

    test("recordFanout handles several messages in one call, each fenced by its own token", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const kept = newMessage({ createdAt: T0 });
      const lost = newMessage({ createdAt: T0 + 1 });
      await storage.enqueue(kept);
      await storage.enqueue(lost);
      const claims = await storage.claimFanout(lease(T0));
      const tokens = new Map(claims.map((claim) => [claim.message.id, claim.token]));
      const result = (messageId: string, token: string) => ({
        messageId,
        token,
        deliveries: [
          { id: nextId("dlv"), messageId, endpointId: endpoint!.id, webhookId: nextId("wh"), createdAt: T0 },
        ],
      });
      await storage.recordFanout(
        [result(kept.id, tokens.get(kept.id)!), result(lost.id, "not-the-token")],
        T0,
      );
      expect(await storage.listDeliveries(kept.id)).toHaveLength(1);
      expect(await storage.listDeliveries(lost.id)).toEqual([]);
      expect((await storage.getMessage(lost.id))?.fannedOutAt).toBeNull();
    });
  });
}
