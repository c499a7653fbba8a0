import type { EndpointStats, OutboundStats } from "@postel/core";
import { expect, test } from "vitest";
import { countText, endpointAtLeast, totalAtLeast } from "./capped-counts.js";

const counts = { due: 0, inFlight: 0, scheduled: 0, held: 0, deadLetters: 0, failed: 0 };

function stats(endpoints: Partial<EndpointStats>[], totals: Partial<typeof counts>): OutboundStats {
  const t = { ...counts, ...totals };
  return {
    at: 0,
    windowMs: 3_600_000,
    backlog: {
      due: t.due,
      oldestDueAt: null,
      inFlight: t.inFlight,
      scheduled: t.scheduled,
      held: t.held,
      unfanned: 0,
    },
    deadLetters: t.deadLetters,
    failed: t.failed,
    countCap: 1000,
    capped: false,
    attempts: { total: 0, failures: 0, failureRate: null },
    endpoints: endpoints.map((e, i) => ({
      id: `ep_${i}`,
      url: "https://example.com",
      description: null,
      state: "active",
      circuitOpenUntil: null,
      ...counts,
      attempts: 0,
      failures: 0,
      failureRate: null,
      ...e,
    })),
    ordering: null,
  };
}

test("in flight and scheduled stop at the cap together: one count of the pending deliveries not due", () => {
  const snapshot = stats([{ inFlight: 400, scheduled: 600 }], { inFlight: 400, scheduled: 600 });
  const endpoint = snapshot.endpoints[0]!;
  expect(endpointAtLeast(snapshot, endpoint, "scheduled")).toBe(true);
  expect(endpointAtLeast(snapshot, endpoint, "inFlight")).toBe(true);
  expect(endpointAtLeast(snapshot, endpoint, "due")).toBe(false);
  expect(totalAtLeast(snapshot, "scheduled")).toBe(true);
  expect(endpointAtLeast({ countCap: null }, endpoint, "scheduled")).toBe(false);
});

test("a total is at least when a deleted endpoint's share (not listed) reaches the cap", () => {
  const snapshot = stats([{ held: 5 }], { held: 1005 });
  expect(totalAtLeast(snapshot, "held")).toBe(true);
  expect(totalAtLeast(stats([{ held: 5 }], { held: 999 }), "held")).toBe(false);
  expect(countText(1005, true)).toBe(">= 1005");
  expect(countText(3, false)).toBe("3");
});
