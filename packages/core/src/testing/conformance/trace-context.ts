import { expect } from "vitest";
import { type ConformanceContext, group } from "./context.js";
import { claimAll, createEndpoints, fanOut, lease, newMessage, T0 } from "./fixtures.js";

const TRACE_CONTEXT = JSON.stringify({
  traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  tracestate: "vendor=opaque,other=1",
});

/** The send's trace context (written when telemetry is on) comes back wherever its message does. */
export function traceContextTests(context: ConformanceContext): void {
  group(context, "trace-context", (test) => {
    test("a message's traceContext round-trips through enqueue, getMessage and listMessages; without one there is no key", async () => {
      const storage = context.storage();
      const traced = newMessage({ traceContext: TRACE_CONTEXT });
      const plain = newMessage();
      await storage.enqueue(traced);
      await storage.enqueue(plain);
      expect((await storage.getMessage(traced.id))?.traceContext).toBe(TRACE_CONTEXT);
      expect(await storage.getMessage(plain.id)).not.toHaveProperty("traceContext");
      if (storage.operations) {
        const listed = await storage.operations.listMessages({ limit: 10 });
        expect(listed.find((m) => m.id === traced.id)?.traceContext).toBe(TRACE_CONTEXT);
      }
    });

    test("enqueueMany writes each message's traceContext", async (t) => {
      const batchSend = t.needs("batchSend");
      const storage = context.storage();
      const messages = [
        newMessage({ traceContext: TRACE_CONTEXT }),
        newMessage(),
        newMessage({ traceContext: "{}" }),
      ];
      await batchSend.enqueueMany(messages);
      const stored = await Promise.all(messages.map((m) => storage.getMessage(m.id)));
      expect(stored.map((m) => m?.traceContext)).toEqual([TRACE_CONTEXT, undefined, "{}"]);
    });

    test("claimFanout hands the traceContext to the worker (a direct delivery is sent from this message)", async () => {
      const storage = context.storage();
      const message = newMessage({ createdAt: T0, traceContext: TRACE_CONTEXT });
      await storage.enqueue(message);
      const [claim] = await storage.claimFanout(lease(T0, { limit: 1 }));
      expect(claim?.message.traceContext).toBe(TRACE_CONTEXT);
    });

    test("claimDue hands the traceContext of each delivery's message to the worker", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, {
        endpoints,
        messages: [{ traceContext: TRACE_CONTEXT }, {}],
      });
      const claimed = await claimAll(storage, T0);
      expect(claimed.size).toBe(deliveries.length);
      for (const { message } of claimed.values()) {
        expect(message.traceContext).toBe(
          message.id === deliveries[0]!.messageId ? TRACE_CONTEXT : undefined,
        );
      }
    });
  });

  group(
    context,
    "trace-context-transactions",
    (test) => {
      test("a message enqueued in the caller's transaction keeps its traceContext", async () => {
        const storage = context.storage();
        const message = newMessage({ traceContext: TRACE_CONTEXT });
        await context.transaction!(async (tx) => storage.enqueue(message, { tx }));
        expect((await storage.getMessage(message.id))?.traceContext).toBe(TRACE_CONTEXT);
      });
    },
    context.transaction ? undefined : "this storage does not join caller transactions",
  );
}
