import { expect } from "vitest";
import { isPostelError } from "../../errors.js";
import type { NewMessage } from "../../storage/records.js";
import { type ConformanceContext, group } from "./context.js";
import { newMessage, T0 } from "./fixtures.js";

/** `enqueueMany`: many messages in one atomic call, with `enqueue`'s idempotency, in order. */
export function enqueueManyTests(context: ConformanceContext): void {
  const stored = (message: NewMessage) => ({
    ...message,
    status: "pending",
    fannedOutAt: null,
    finishedAt: null,
  });

  group(context, "enqueue-many", (test) => {
    test("enqueueMany writes every message as given and returns their ids in input order", async () => {
      const storage = context.storage();
      const messages = [
        newMessage({ tenantId: "tenant-a", expiresAt: T0 + 60_000, idempotencyKey: "batch-a" }),
        newMessage({ type: "invoice.paid", payload: '{"amount":1250,"lines":[{"sku":"a"}]}' }),
        newMessage({ tenantId: "tenant-b", idempotencyKey: "batch-b", createdAt: T0 + 1 }),
      ];
      expect(await storage.batchSend!.enqueueMany(messages)).toEqual(
        messages.map((message) => ({ id: message.id, reused: false })),
      );
      for (const message of messages) expect(await storage.getMessage(message.id)).toEqual(stored(message));
    });

    test("an empty batch returns [] and writes nothing", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      expect(await storage.batchSend!.enqueueMany([])).toEqual([]);
      expect(await storage.operations!.listMessages({ limit: 10 })).toEqual([]);
    });

    test("a key already stored, by enqueue or an earlier batch, gives its id with reused: true and inserts nothing", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const single = newMessage({ idempotencyKey: "order-1" });
      await storage.enqueue(single);
      const earlier = [newMessage({ idempotencyKey: "order-2" })];
      await storage.batchSend!.enqueueMany(earlier);
      const batch = [
        newMessage({ idempotencyKey: "order-2" }),
        newMessage(),
        newMessage({ idempotencyKey: "order-1" }),
      ];
      expect(await storage.batchSend!.enqueueMany(batch)).toEqual([
        { id: earlier[0]!.id, reused: true },
        { id: batch[1]!.id, reused: false },
        { id: single.id, reused: true },
      ]);
      expect(await storage.getMessage(batch[0]!.id)).toBeNull();
      expect(await storage.getMessage(batch[2]!.id)).toBeNull();
      expect(await storage.operations!.listMessages({ limit: 10 })).toHaveLength(3);
    });

    test("a key repeated within a batch is inserted once, by its first message; later ones get its id with reused: true", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const batch = [
        newMessage({ idempotencyKey: "twice", payload: '{"n":1}' }),
        newMessage(),
        newMessage({ idempotencyKey: "twice", payload: '{"n":2}' }),
        newMessage({ idempotencyKey: "twice", payload: '{"n":3}' }),
      ];
      expect(await storage.batchSend!.enqueueMany(batch)).toEqual([
        { id: batch[0]!.id, reused: false },
        { id: batch[1]!.id, reused: false },
        { id: batch[0]!.id, reused: true },
        { id: batch[0]!.id, reused: true },
      ]);
      expect((await storage.getMessage(batch[0]!.id))?.payload).toBe('{"n":1}');
      expect(await storage.operations!.listMessages({ limit: 10 })).toHaveLength(2);
    });

    test("a batch of 5,000 messages lands whole, each once, with results in input order", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const batch = Array.from({ length: 5_000 }, (_, i) =>
        newMessage({
          payload: JSON.stringify({ i }),
          idempotencyKey: i % 10 === 0 ? `bulk-${i}` : null,
          tenantId: i % 2 === 0 ? "even" : null,
        }),
      );
      const results = await storage.batchSend!.enqueueMany(batch);
      expect(results).toEqual(batch.map((message) => ({ id: message.id, reused: false })));
      expect(await storage.operations!.listMessages({ limit: 5_001 })).toHaveLength(5_000);
      expect(await storage.getMessage(batch[4_998]!.id)).toEqual(stored(batch[4_998]!));
      expect(await storage.getMessage(batch[4_990]!.id)).toEqual(stored(batch[4_990]!));
    });

    test("a batch holding an id already stored fails as a whole with INVALID_ARGUMENT and writes none of it", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      const taken = newMessage();
      await storage.enqueue(taken);
      const batch = [
        newMessage({ idempotencyKey: "never" }),
        { ...newMessage(), id: taken.id },
        newMessage(),
      ];
      const error = await storage.batchSend!.enqueueMany(batch).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isPostelError(error) && error.code).toBe("INVALID_ARGUMENT");
      expect(await storage.operations!.listMessages({ limit: 10 })).toHaveLength(1);
      const retried = newMessage({ idempotencyKey: "never" });
      expect(await storage.enqueue(retried)).toEqual({ id: retried.id, reused: false });
    });

    test("concurrent batches with overlapping idempotency keys insert each key once and agree on its id", async (t) => {
      t.needs("operations");
      const storage = context.storage();
      // Four batches over keys 0-999, each starting at a different key, in opposite orders: written in
      // the order given, two of them would each hold a key the other waits for.
      const batches = Array.from({ length: 4 }, (_, b) => {
        const keys = Array.from({ length: 500 }, (_, i) => (b * 250 + i) % 1_000);
        if (b % 2 === 1) keys.reverse();
        return [
          ...keys.map((k) => newMessage({ idempotencyKey: `shared-${k}` })),
          ...Array.from({ length: 10 }, () => newMessage()),
        ];
      });
      const results = await Promise.all(batches.map((batch) => storage.batchSend!.enqueueMany(batch)));
      const idByKey = new Map<string, string>();
      let inserted = 0;
      for (const [b, batch] of batches.entries()) {
        for (const [i, message] of batch.entries()) {
          const result = results[b]![i]!;
          if (!result.reused) inserted += 1;
          const key = message.idempotencyKey;
          if (key === null) {
            expect(result).toEqual({ id: message.id, reused: false });
            continue;
          }
          const agreed = idByKey.get(key) ?? result.id;
          idByKey.set(key, agreed);
          expect(result.id).toBe(agreed);
        }
      }
      const keys = idByKey.size;
      expect(inserted).toBe(keys + 40);
      const all = await storage.operations!.listMessages({ limit: 2_000 });
      expect(all).toHaveLength(keys + 40);
      expect(new Set(all.map((m) => m.id))).toEqual(
        new Set([...idByKey.values(), ...batches.flatMap((batch) => batch.slice(500).map((m) => m.id))]),
      );
    });
  });

  const noTransaction = context.transaction ? undefined : "no `transaction` option was given";
  const inTransaction = <T>(fn: (tx: unknown) => Promise<T>): Promise<T> => context.transaction!(fn);

  group(
    context,
    "enqueue-many-transactions",
    (test) => {
      test("a batch enqueued in a transaction that commits is all visible afterwards", async () => {
        const storage = context.storage();
        const batch = [newMessage({ idempotencyKey: "tx-batch" }), newMessage(), newMessage()];
        await inTransaction(async (tx) => {
          expect(await storage.batchSend!.enqueueMany(batch, { tx })).toEqual(
            batch.map((message) => ({ id: message.id, reused: false })),
          );
        });
        for (const message of batch) expect(await storage.getMessage(message.id)).toEqual(stored(message));
      });

      test("a batch enqueued in a transaction that throws writes nothing and leaves its keys free", async () => {
        const storage = context.storage();
        const batch = [newMessage({ idempotencyKey: "rolled-back" }), newMessage(), newMessage()];
        await expect(
          inTransaction(async (tx) => {
            await storage.batchSend!.enqueueMany(batch, { tx });
            throw new Error("rollback");
          }),
        ).rejects.toThrow("rollback");
        expect(await storage.operations!.listMessages({ limit: 10 })).toEqual([]);
        const retried = newMessage({ idempotencyKey: "rolled-back" });
        expect(await storage.batchSend!.enqueueMany([retried])).toEqual([{ id: retried.id, reused: false }]);
      });

      test("in a transaction, a key enqueued earlier in it or committed before gives that id with reused: true", async () => {
        const storage = context.storage();
        const committed = newMessage({ idempotencyKey: "before" });
        await storage.enqueue(committed);
        const inside = newMessage({ idempotencyKey: "inside" });
        const batch = [newMessage({ idempotencyKey: "inside" }), newMessage({ idempotencyKey: "before" })];
        const results = await inTransaction(async (tx) => {
          await storage.enqueue(inside, { tx });
          return storage.batchSend!.enqueueMany(batch, { tx });
        });
        expect(results).toEqual([
          { id: inside.id, reused: true },
          { id: committed.id, reused: true },
        ]);
        expect(await storage.operations!.listMessages({ limit: 10 })).toHaveLength(2);
      });
    },
    noTransaction,
  );
}
