import { type EndpointStats, HELD_KEYS_IN_STATS, type OutboundStats } from "@postel/core";
import { describe, expect, test } from "vitest";
import { checkThresholds } from "./check-thresholds.js";

const AT = Date.UTC(2025, 5, 1, 12);

function endpoint(id: string, counts: Partial<EndpointStats> = {}): EndpointStats {
  return {
    id,
    url: `https://example.com/${id}`,
    description: null,
    state: "active",
    circuitOpenUntil: null,
    due: 0,
    inFlight: 0,
    scheduled: 0,
    held: 0,
    deadLetters: 0,
    failed: 0,
    attempts: 0,
    failures: 0,
    failureRate: null,
    ...counts,
  };
}

// A stats() answer whose totals are the listed endpoints' sums plus `deleted` (a deleted endpoint's).
function snapshot(
  endpoints: EndpointStats[],
  options: { countCap?: number | null; oldestDueAt?: number | null; deleted?: Partial<EndpointStats> } = {},
): OutboundStats {
  const sum = (key: "due" | "deadLetters" | "failed") =>
    endpoints.reduce((n, e) => n + e[key], 0) + (options.deleted?.[key] ?? 0);
  return {
    at: AT,
    windowMs: 3_600_000,
    backlog: {
      due: sum("due"),
      oldestDueAt: options.oldestDueAt ?? null,
      inFlight: 0,
      scheduled: 0,
      held: 0,
      unfanned: 0,
    },
    deadLetters: sum("deadLetters"),
    failed: sum("failed"),
    countCap: options.countCap === undefined ? 1000 : options.countCap,
    capped: false,
    attempts: { total: 0, failures: 0, failureRate: null },
    endpoints,
    ordering: null,
  };
}

// stats() as the command calls it: the capped snapshot, or the exact one; remembers which it read.
function reader(capped: OutboundStats, exact?: OutboundStats) {
  const reads: boolean[] = [];
  return {
    reads,
    stats: async ({ exact: wantsExact }: { exact: boolean }) => {
      reads.push(wantsExact);
      if (!wantsExact) return capped;
      if (exact === undefined) throw new Error("exact counts were not expected");
      return exact;
    },
  };
}

/** A snapshot with `held` keys held (stats() lists at most HELD_KEYS_IN_STATS of them). */
function withHeld(held: number): OutboundStats {
  const keys = Array.from({ length: Math.min(held, HELD_KEYS_IN_STATS) }, (_, i) => ({
    endpointId: "ep_1",
    orderingKey: `k${i}`,
    deliveryId: `dlv_${i}`,
    messageId: `msg_${i}`,
    status: "dead-lettered" as const,
    lastError: "HTTP 500",
    heldAt: AT,
    waiting: 1,
  }));
  return { ...snapshot([endpoint("ep_1")]), ordering: { waiting: held, heldKeys: keys } };
}

describe("checkThresholds", () => {
  test("held keys: listed ones decide; a full list under a higher threshold is counted on, up to it and one", async () => {
    const few = await checkThresholds(reader(withHeld(3)).stats, { "held-keys": 0 });
    expect(few).toEqual([{ name: "held-keys", value: 3, atLeast: false, threshold: 0, ok: false }]);
    const counted: number[] = [];
    const count = (total: number) => async (upTo: number) => {
      counted.push(upTo);
      return Math.min(total, upTo);
    };
    // A full list over the threshold fails as it is: no counting.
    const over = await checkThresholds(reader(withHeld(500)).stats, { "held-keys": 10 }, count(500));
    expect(over).toEqual([
      { name: "held-keys", value: HELD_KEYS_IN_STATS, atLeast: true, threshold: 10, ok: false },
    ]);
    expect(counted).toEqual([]);
    const under = await checkThresholds(reader(withHeld(35)).stats, { "held-keys": 50 }, count(35));
    expect(under).toEqual([{ name: "held-keys", value: 35, atLeast: false, threshold: 50, ok: true }]);
    const above = await checkThresholds(reader(withHeld(500)).stats, { "held-keys": 50 }, count(500));
    expect(above).toEqual([{ name: "held-keys", value: 51, atLeast: true, threshold: 50, ok: false }]);
    expect(counted).toEqual([51, 51]);
    // No ordering capability: nothing is held.
    expect((await checkThresholds(reader(snapshot([])).stats, { "held-keys": 0 }))[0]).toMatchObject({
      value: 0,
      ok: true,
    });
  });

  test("a value at its threshold is OK, one over it fails, in the order of the flags", async () => {
    const { stats } = reader(
      snapshot([
        endpoint("ep_1", { deadLetters: 2, failed: 3, due: 1 }),
        endpoint("ep_2", { state: "disabled" }),
        endpoint("ep_3", { state: "circuit-open" }),
      ]),
    );
    const checks = await checkThresholds(stats, { disabled: 0, failed: 3, "dead-letters": 1, due: 1 });
    expect(checks).toEqual([
      { name: "due", value: 1, atLeast: false, threshold: 1, ok: true },
      { name: "dead-letters", value: 2, atLeast: false, threshold: 1, ok: false },
      { name: "failed", value: 3, atLeast: false, threshold: 3, ok: true },
      { name: "disabled", value: 1, atLeast: false, threshold: 0, ok: false },
    ]);
  });

  test("the oldest due delivery's age is measured from the snapshot's time; nothing due is OK", async () => {
    const old = await checkThresholds(reader(snapshot([], { oldestDueAt: AT - 600_000 })).stats, {
      "oldest-due": 300_000,
    });
    expect(old).toEqual([
      { name: "oldest-due", value: 600_000, atLeast: false, threshold: 300_000, ok: false },
    ]);
    const fresh = await checkThresholds(reader(snapshot([], { oldestDueAt: AT - 300_000 })).stats, {
      "oldest-due": 300_000,
    });
    expect(fresh[0]).toMatchObject({ value: 300_000, ok: true });
    const none = await checkThresholds(reader(snapshot([])).stats, { "oldest-due": 0 });
    expect(none).toEqual([{ name: "oldest-due", value: null, atLeast: false, threshold: 0, ok: true }]);
  });

  test("a count that stopped at the cap over its threshold fails as at least the cap, without exact counts", async () => {
    const { stats, reads } = reader(snapshot([endpoint("ep_1", { deadLetters: 1000 })]));
    const checks = await checkThresholds(stats, { "dead-letters": 10 });
    expect(checks).toEqual([{ name: "dead-letters", value: 1000, atLeast: true, threshold: 10, ok: false }]);
    expect(reads).toEqual([false]);
  });

  test("a count that stopped at the cap at or under its threshold is decided by exact counts", async () => {
    const capped = snapshot([endpoint("ep_1", { failed: 1000 })]);
    const under = reader(capped, snapshot([endpoint("ep_1", { failed: 1200 })], { countCap: null }));
    expect(await checkThresholds(under.stats, { failed: 5000 })).toEqual([
      { name: "failed", value: 1200, atLeast: false, threshold: 5000, ok: true },
    ]);
    expect(under.reads).toEqual([false, true]);
    const over = reader(capped, snapshot([endpoint("ep_1", { failed: 6000 })], { countCap: null }));
    expect(await checkThresholds(over.stats, { failed: 5000 })).toEqual([
      { name: "failed", value: 6000, atLeast: false, threshold: 5000, ok: false },
    ]);
  });

  test("counts under the cap are exact: no second read", async () => {
    const { stats, reads } = reader(snapshot([endpoint("ep_1", { due: 999, deadLetters: 999 })]));
    const checks = await checkThresholds(stats, { due: 5000, "dead-letters": 5000 });
    expect(checks.map((c) => [c.value, c.atLeast, c.ok])).toEqual([
      [999, false, true],
      [999, false, true],
    ]);
    expect(reads).toEqual([false]);
  });

  test("a deleted endpoint's dead letters at the cap count as at least (they are in the total, not listed)", async () => {
    const capped = snapshot([endpoint("ep_1", { deadLetters: 1 })], { deleted: { deadLetters: 1000 } });
    const over = await checkThresholds(reader(capped).stats, { "dead-letters": 100 });
    expect(over).toEqual([{ name: "dead-letters", value: 1001, atLeast: true, threshold: 100, ok: false }]);
    const exact = snapshot([endpoint("ep_1", { deadLetters: 1 })], {
      countCap: null,
      deleted: { deadLetters: 4000 },
    });
    const under = reader(capped, exact);
    expect(await checkThresholds(under.stats, { "dead-letters": 2000 })).toEqual([
      { name: "dead-letters", value: 4001, atLeast: false, threshold: 2000, ok: false },
    ]);
    expect(under.reads).toEqual([false, true]);
  });
});
