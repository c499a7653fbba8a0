import { expect } from "vitest";
import { type ConformanceContext, group } from "./context.js";
import { newMessage, T0 } from "./fixtures.js";

/** `enqueue` and `getMessage`, plus enqueueing inside a caller's transaction. */
export function outboxTests(context: ConformanceContext): void {
  group(context, "enqueue", (test) => {
    test("enqueue returns the message id with reused: false", async () => {
      const message = newMessage();
      expect(await context.storage().enqueue(message)).toEqual({ id: message.id, reused: false });
    });

    test("getMessage returns exactly what was written, pending with fannedOutAt and finishedAt null", async () => {
      const storage = context.storage();
      const message = newMessage({
        type: "invoice.paid",
        payload: '{"amount":1250,"currency":"EUR","lines":[{"sku":"a"}]}',
        tenantId: "tenant-a",
        idempotencyKey: "invoice-1250",
        expiresAt: T0 + 86_400_000,
      });
      await storage.enqueue(message);
      expect(await storage.getMessage(message.id)).toEqual({
        ...message,
        status: "pending",
        fannedOutAt: null,
        finishedAt: null,
      });
    });

    test("getMessage returns null for an unknown id", async () => {
      expect(await context.storage().getMessage("msg_unknown")).toBeNull();
    });

    test("a second enqueue with the same idempotencyKey inserts nothing and returns the first id with reused: true", async () => {
      const storage = context.storage();
      const first = newMessage({ idempotencyKey: "order-1" });
      const second = newMessage({ idempotencyKey: "order-1", payload: '{"order":2}', createdAt: T0 + 1 });
      await storage.enqueue(first);
      expect(await storage.enqueue(second)).toEqual({ id: first.id, reused: true });
      expect(await storage.getMessage(second.id)).toBeNull();
      expect((await storage.getMessage(first.id))?.payload).toBe(first.payload);
      if (storage.operations) expect(await storage.operations.listMessages({ limit: 10 })).toHaveLength(1);
    });

    test("messages with different idempotency keys are both inserted", async () => {
      const storage = context.storage();
      const a = newMessage({ idempotencyKey: "order-1" });
      const b = newMessage({ idempotencyKey: "order-2" });
      expect(await storage.enqueue(a)).toEqual({ id: a.id, reused: false });
      expect(await storage.enqueue(b)).toEqual({ id: b.id, reused: false });
      expect((await storage.getMessage(a.id))?.idempotencyKey).toBe("order-1");
      expect((await storage.getMessage(b.id))?.idempotencyKey).toBe("order-2");
      if (storage.operations) expect(await storage.operations.listMessages({ limit: 10 })).toHaveLength(2);
    });

    test("messages without an idempotency key never collide with each other", async () => {
      const storage = context.storage();
      const a = newMessage();
      const b = newMessage();
      expect(await storage.enqueue(a)).toEqual({ id: a.id, reused: false });
      expect(await storage.enqueue(b)).toEqual({ id: b.id, reused: false });
      expect(await storage.getMessage(b.id)).not.toBeNull();
    });

    test("concurrent enqueues with one idempotency key insert exactly one message and all return its id", async () => {
      const storage = context.storage();
      const messages = Array.from({ length: 8 }, () => newMessage({ idempotencyKey: "race" }));
      const results = await Promise.all(messages.map((message) => storage.enqueue(message)));
      const inserted = results.filter((result) => !result.reused);
      expect(inserted).toHaveLength(1);
      expect(new Set(results.map((result) => result.id))).toEqual(new Set([inserted[0]!.id]));
      const stored = await Promise.all(messages.map((message) => storage.getMessage(message.id)));
      expect(stored.filter((message) => message !== null)).toHaveLength(1);
      if (storage.operations) expect(await storage.operations.listMessages({ limit: 10 })).toHaveLength(1);
    });

    test("a returned message is a copy: mutating it does not change the stored row", async () => {
      const storage = context.storage();
      const message = newMessage();
      await storage.enqueue(message);
      const read = (await storage.getMessage(message.id))!;
      read.status = "dispatched";
      read.payload = "{}";
      expect(await storage.getMessage(message.id)).toMatchObject({
        status: "pending",
        payload: message.payload,
      });
    });
  });

  // Without a transaction runner these groups are registered as skipped, with the reason in each title.
  const noTransaction = context.transaction ? undefined : "no `transaction` option was given";
  const inTransaction = <T>(fn: (tx: unknown) => Promise<T>): Promise<T> => context.transaction!(fn);

  group(
    context,
    "transactions",
    (test) => {
      test("a message enqueued in a transaction that commits is visible afterwards", async () => {
        const storage = context.storage();
        const message = newMessage({ idempotencyKey: "tx-commit" });
        const result = await inTransaction(async (tx) => {
          expect(await storage.enqueue(message, { tx })).toEqual({ id: message.id, reused: false });
          return "committed";
        });
        expect(result).toBe("committed");
        expect((await storage.getMessage(message.id))?.status).toBe("pending");
      });

      test("a message enqueued in a transaction that throws is absent and the error propagates", async () => {
        const storage = context.storage();
        const message = newMessage();
        const failure = new Error("business write failed");
        await expect(
          inTransaction(async (tx) => {
            await storage.enqueue(message, { tx });
            throw failure;
          }),
        ).rejects.toThrow(failure.message);
        expect(await storage.getMessage(message.id)).toBeNull();
        if (storage.operations) expect(await storage.operations.listMessages({ limit: 10 })).toEqual([]);
      });

      test("a rolled-back transaction leaves its idempotency key free for a later enqueue", async () => {
        const storage = context.storage();
        const rolledBack = newMessage({ idempotencyKey: "order-7" });
        await expect(
          inTransaction(async (tx) => {
            await storage.enqueue(rolledBack, { tx });
            throw new Error("rollback");
          }),
        ).rejects.toThrow("rollback");
        const retried = newMessage({ idempotencyKey: "order-7" });
        expect(await storage.enqueue(retried)).toEqual({ id: retried.id, reused: false });
      });

      test("inside a transaction, a key already committed returns the committed id with reused: true", async () => {
        const storage = context.storage();
        const committed = newMessage({ idempotencyKey: "order-8" });
        await storage.enqueue(committed);
        const again = newMessage({ idempotencyKey: "order-8" });
        const result = await inTransaction((tx) => storage.enqueue(again, { tx }));
        expect(result).toEqual({ id: committed.id, reused: true });
        expect(await storage.getMessage(again.id)).toBeNull();
      });
    },
    noTransaction,
  );

  group(
    context,
    "transaction-isolation",
    (test) => {
      test("a message enqueued in a transaction is not readable before the transaction commits", async () => {
        const storage = context.storage();
        const message = newMessage();
        await inTransaction(async (tx) => {
          await storage.enqueue(message, { tx });
          expect(await storage.getMessage(message.id)).toBeNull();
        });
        expect(await storage.getMessage(message.id)).not.toBeNull();
      });

      test("an enqueue racing an open transaction for the same idempotency key gets the committed id", async () => {
        const storage = context.storage();
        const inside = newMessage({ idempotencyKey: "race-commit" });
        const outside = newMessage({ idempotencyKey: "race-commit" });
        let racing: Promise<{ id: string; reused: boolean }> | undefined;
        await inTransaction(async (tx) => {
          await storage.enqueue(inside, { tx });
          racing = storage.enqueue(outside);
        });
        expect(await racing).toEqual({ id: inside.id, reused: true });
        expect(await storage.getMessage(outside.id)).toBeNull();
      });

      test("an enqueue racing a transaction that rolls back takes the idempotency key", async () => {
        const storage = context.storage();
        const inside = newMessage({ idempotencyKey: "race-rollback" });
        const outside = newMessage({ idempotencyKey: "race-rollback" });
        let racing: Promise<{ id: string; reused: boolean }> | undefined;
        await expect(
          inTransaction(async (tx) => {
            await storage.enqueue(inside, { tx });
            racing = storage.enqueue(outside);
            throw new Error("rollback");
          }),
        ).rejects.toThrow("rollback");
        expect(await racing).toEqual({ id: outside.id, reused: false });
        expect(await storage.getMessage(inside.id)).toBeNull();
      });
    },
    noTransaction,
  );
}
