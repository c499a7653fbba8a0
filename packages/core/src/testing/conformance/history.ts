import { expect } from "vitest";
import { type ConformanceContext, group } from "./context.js";
import { attemptFor, claimAll, createEndpoints, fanOut, ids, lease, T0 } from "./fixtures.js";

/** Claims stay correct (and, with the right indexes, flat) while history grows. */
export function historyTests(context: ConformanceContext): void {
  group(context, "history", (test) => {
    test("claimDue returns exactly the 10 due deliveries beside 5,000 terminal ones", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 50);
      await fanOut(storage, { endpoints, messages: 100 });
      const history = [...(await claimAll(storage, T0, { limit: 10_000 })).values()];
      expect(history).toHaveLength(5_000);
      const result = await storage.recordOutcomes(
        history.map((claimed, i) => ({
          deliveryId: claimed.delivery.id,
          leaseToken: claimed.leaseToken,
          transition: { kind: i % 10 === 0 ? "dead-lettered" : "succeeded" },
          attempt: attemptFor(claimed, { startedAt: T0 }),
        })),
        T0 + 1,
      );
      expect(result.recorded).toHaveLength(5_000);

      const { deliveries } = await fanOut(storage, { endpoints: endpoints.slice(0, 10), now: T0 + 2 });
      const due = await storage.claimDue(lease(T0 + 2, { limit: 100 }));
      expect(ids(due.map((claimed) => claimed.delivery))).toEqual(ids(deliveries));
    });
  });
}
