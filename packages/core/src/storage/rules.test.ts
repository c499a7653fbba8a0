import { describe, expect, test } from "vitest";
import {
  finalMessageStatus,
  onlyDeliveryFinalStatus,
  TRANSITION_STATUS,
  fanoutMessageStatus,
} from "./rules.js";
import type { DeliveryTransition } from "./delivery-storage.js";

describe("core's status rules", () => {
  test("a message's final status: dead-lettered, then expired, else dispatched; null while a delivery is open", () => {
    expect(finalMessageStatus(["succeeded", "dead-lettered", "expired"])).toBe("dead-lettered");
    expect(finalMessageStatus(["succeeded", "expired", "cancelled"])).toBe("expired");
    expect(finalMessageStatus(["succeeded", "failed", "cancelled"])).toBe("dispatched");
    expect(finalMessageStatus([])).toBe("dispatched");
    expect(finalMessageStatus(["succeeded", "held"])).toBeNull();
    expect(finalMessageStatus(["pending"])).toBeNull();
  });

  test("a message with one delivery finishes as that delivery's transition says, for every transition", () => {
    const expected: Record<DeliveryTransition["kind"], string | null> = {
      succeeded: "dispatched",
      retry: null,
      failed: "dispatched",
      "dead-lettered": "dead-lettered",
      expired: "expired",
      deferred: null,
      held: null,
      cancelled: "dispatched",
    };
    for (const kind of Object.keys(TRANSITION_STATUS) as DeliveryTransition["kind"][]) {
      const transition = { kind, nextAttemptAt: 0, retriesUsed: 0 } as DeliveryTransition;
      expect(onlyDeliveryFinalStatus(transition), kind).toBe(expected[kind]);
      expect(onlyDeliveryFinalStatus(transition), kind).toBe(finalMessageStatus([TRANSITION_STATUS[kind]]));
    }
  });

  test("fan-out: expired when the ttl elapsed, dispatched with no delivery, else still pending", () => {
    expect(fanoutMessageStatus({ expired: true, deliveries: [] })).toBe("expired");
    expect(fanoutMessageStatus({ deliveries: [] })).toBe("dispatched");
    expect(fanoutMessageStatus({ deliveries: [{} as never] })).toBeNull();
  });
});
