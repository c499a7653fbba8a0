import { expect } from "vitest";
import { type ConformanceContext, group } from "./context.js";
import { lease, newMessage, T0 } from "./fixtures.js";

/** A test event (`endpoints.sendTest`) keeps its one endpoint wherever its message comes back. */
export function testEventTests(context: ConformanceContext): void {
  group(context, "test-events", (test) => {
    test("a message's testEndpointId round-trips through enqueue, getMessage and listMessages; without one there is no key", async () => {
      const storage = context.storage();
      const probe = newMessage({ testEndpointId: "ep_test_1" });
      const plain = newMessage();
      await storage.enqueue(probe);
      await storage.enqueue(plain);
      expect((await storage.getMessage(probe.id))?.testEndpointId).toBe("ep_test_1");
      expect(await storage.getMessage(plain.id)).not.toHaveProperty("testEndpointId");
      if (storage.operations) {
        const listed = await storage.operations.listMessages({ limit: 10 });
        expect(listed.find((m) => m.id === probe.id)?.testEndpointId).toBe("ep_test_1");
        expect(listed.find((m) => m.id === plain.id)).not.toHaveProperty("testEndpointId");
      }
    });

    test("claimFanout hands the testEndpointId to the worker (fan-out sends the event to that endpoint only)", async () => {
      const storage = context.storage();
      await storage.enqueue(newMessage({ createdAt: T0, testEndpointId: "ep_test_2" }));
      await storage.enqueue(newMessage({ createdAt: T0 + 1 }));
      const claims = await storage.claimFanout(lease(T0 + 1, { limit: 2 }));
      expect(claims.map((claim) => claim.message.testEndpointId)).toEqual(["ep_test_2", undefined]);
    });
  });
}
