import { describe, expect, test } from "vitest";
import { expirySweeper } from "./dedup.js";

const T0 = Date.UTC(2026, 0, 1);

/** A fake table of `expired` records the sweeper deletes from; every call is logged. */
function table(expired: number, options: { failFirst?: boolean } = {}) {
  const state = { expired, calls: [] as { now: number; batch: number }[], fail: options.failFirst ?? false };
  const deleteExpired = async (now: number, batch: number) => {
    state.calls.push({ now, batch });
    if (state.fail) {
      state.fail = false;
      throw new Error("connection reset");
    }
    const gone = Math.min(batch, state.expired);
    state.expired -= gone;
    return gone;
  };
  return { state, deleteExpired };
}

describe("expirySweeper", () => {
  test("deletes batch after batch until one comes back short", async () => {
    const { state, deleteExpired } = table(2_500);
    const sweeper = expirySweeper(deleteExpired);
    sweeper.maybeSweep(T0);
    await sweeper.settled();
    expect(state.expired).toBe(0);
    expect(state.calls).toEqual([
      { now: T0, batch: 1000 },
      { now: T0, batch: 1000 },
      { now: T0, batch: 1000 },
    ]);
  });

  test("sweeps at most once a minute by the caller's clock, and never twice at once", async () => {
    const { state, deleteExpired } = table(0);
    const sweeper = expirySweeper(deleteExpired);
    sweeper.maybeSweep(T0);
    sweeper.maybeSweep(T0 + 120_000); // the first is still running: not a second one
    await sweeper.settled();
    sweeper.maybeSweep(T0 + 59_999);
    await sweeper.settled();
    expect(state.calls.map((call) => call.now)).toEqual([T0]);
    sweeper.maybeSweep(T0 + 60_000);
    await sweeper.settled();
    expect(state.calls.map((call) => call.now)).toEqual([T0, T0 + 60_000]);
  });

  test("stops after maxBatches, leaving the rest to the next sweep", async () => {
    const { state, deleteExpired } = table(10);
    const sweeper = expirySweeper(deleteExpired, { batch: 2, maxBatches: 3 });
    sweeper.maybeSweep(T0);
    await sweeper.settled();
    expect(state.expired).toBe(4);
    sweeper.maybeSweep(T0 + 60_000);
    await sweeper.settled();
    expect(state.expired).toBe(0);
  });

  test("a failing sweep is dropped without an unhandled rejection; the next one runs a minute later", async () => {
    const { state, deleteExpired } = table(5, { failFirst: true });
    const sweeper = expirySweeper(deleteExpired);
    sweeper.maybeSweep(T0);
    await expect(sweeper.settled()).resolves.toBeUndefined();
    expect(state.expired).toBe(5);
    sweeper.maybeSweep(T0 + 60_000);
    await sweeper.settled();
    expect(state.expired).toBe(0);
  });
});
