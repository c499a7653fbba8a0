import { describe, expect, test, vi } from "vitest";
import { ManualClock, sleep, systemClock } from "./clock.js";

const START = Date.UTC(2026, 0, 1);

describe("ManualClock", () => {
  test("starts at 2026-01-01T00:00:00Z by default, or at the given number or Date", () => {
    expect(new ManualClock().now()).toBe(START);
    expect(new ManualClock(1234).now()).toBe(1234);
    expect(new ManualClock(new Date("2030-05-06T07:08:09Z")).now()).toBe(Date.UTC(2030, 4, 6, 7, 8, 9));
  });

  test("fires timers in due-time order, with ties in scheduling order, each at its due time", () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    const at = (label: string) => () => fired.push(`${label}@${clock.now()}`);
    clock.setTimer(at("c"), 300);
    clock.setTimer(at("a1"), 100);
    clock.setTimer(at("b"), 200);
    clock.setTimer(at("a2"), 100);
    clock.advance(250);
    expect(fired).toEqual(["a1@100", "a2@100", "b@200"]);
    expect(clock.now()).toBe(250);
    expect(clock.pendingTimers()).toBe(1);
  });

  test.each([
    ["exactly at the new time", 1_000, true],
    ["one millisecond later", 1_001, false],
  ])("a timer due %s fires: %s", (_label, due, fires) => {
    const clock = new ManualClock(0);
    const fn = vi.fn();
    clock.setTimer(fn, due);
    clock.advance("1s");
    expect(fn).toHaveBeenCalledTimes(fires ? 1 : 0);
  });

  test("a timer scheduled by a firing timer also fires when it falls inside the window", () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    const tick = () => {
      fired.push(clock.now());
      clock.setTimer(tick, 100);
    };
    clock.setTimer(tick, 100);
    clock.advance(350);
    expect(fired).toEqual([100, 200, 300]);
    expect(clock.pendingTimers()).toBe(1);
  });

  test("a cancelled timer never fires and is no longer pending", () => {
    const clock = new ManualClock(0);
    const fn = vi.fn();
    const handle = clock.setTimer(fn, 10);
    handle.cancel();
    clock.advance(100);
    expect(fn).not.toHaveBeenCalled();
    expect(clock.pendingTimers()).toBe(0);
  });

  test("a zero or negative delay fires on the next advance, not synchronously", () => {
    const clock = new ManualClock(0);
    const fn = vi.fn();
    clock.setTimer(fn, 0);
    clock.setTimer(fn, -5);
    expect(fn).not.toHaveBeenCalled();
    clock.advance(0);
    expect(fn).toHaveBeenCalledTimes(2);
  });

  test("advance accepts duration strings", () => {
    const clock = new ManualClock(0);
    clock.advance("2h");
    expect(clock.now()).toBe(7_200_000);
  });

  test("advance rejects an invalid duration without moving time", () => {
    const clock = new ManualClock(0);
    expect(() => clock.advance(-1)).toThrow(/ManualClock.advance/);
    expect(clock.now()).toBe(0);
  });

  test("set jumps to a time without firing timers; the next advance fires what is due", () => {
    const clock = new ManualClock(0);
    const fn = vi.fn();
    clock.setTimer(fn, 500);
    clock.set(new Date(1_000));
    expect(clock.now()).toBe(1_000);
    expect(fn).not.toHaveBeenCalled();
    clock.advance(0);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  test("advance runs timers back to back, before their async work continues", () => {
    const clock = new ManualClock(0);
    const log: string[] = [];
    clock.setTimer(async () => {
      await Promise.resolve();
      log.push("async work of first");
    }, 100);
    clock.setTimer(() => log.push("second"), 200);
    clock.advance(300);
    expect(log).toEqual(["second"]);
  });

  test("advanceAsync lets async work started by one timer run before the next timer fires", async () => {
    const clock = new ManualClock(0);
    const log: string[] = [];
    clock.setTimer(async () => {
      for (let i = 0; i < 20; i++) await Promise.resolve(); // e.g. several awaited storage calls
      log.push("async work of first");
    }, 100);
    clock.setTimer(() => log.push("second"), 200);
    await clock.advanceAsync(300);
    expect(log).toEqual(["async work of first", "second"]);
    expect(clock.now()).toBe(300);
  });

  test("advanceAsync fires timers that async work schedules inside the window", async () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    clock.setTimer(async () => {
      await Promise.resolve();
      clock.setTimer(() => fired.push(clock.now()), 50);
    }, 100);
    await clock.advanceAsync(200);
    expect(fired).toEqual([150]);
  });
});

describe("sleep", () => {
  test("resolves after the given time on the clock", async () => {
    const clock = new ManualClock(0);
    let done = false;
    const slept = sleep(clock, 1_000).then(() => {
      done = true;
    });
    clock.advance(999);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await slept;
    expect(done).toBe(true);
  });

  test("resolves early when the signal aborts, and cancels its timer", async () => {
    const clock = new ManualClock(0);
    const controller = new AbortController();
    const slept = sleep(clock, 60_000, controller.signal);
    expect(clock.pendingTimers()).toBe(1);
    controller.abort();
    await expect(slept).resolves.toBeUndefined();
    expect(clock.pendingTimers()).toBe(0);
  });

  test("resolves at once without scheduling when the signal is already aborted", async () => {
    const clock = new ManualClock(0);
    await sleep(clock, 60_000, AbortSignal.abort());
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe("systemClock", () => {
  test("reads real time", () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  test("fires a timer after its delay and not after cancel", async () => {
    const fired = vi.fn();
    const cancelled = vi.fn();
    systemClock.setTimer(fired, 5);
    systemClock.setTimer(cancelled, 5).cancel();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fired).toHaveBeenCalledTimes(1);
    expect(cancelled).not.toHaveBeenCalled();
  });

  test("does not fire early for delays beyond setTimeout's 2^31-1 ms limit", () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const fn = vi.fn();
      systemClock.setTimer(fn, 3 * 2_147_483_647);
      vi.advanceTimersByTime(2_147_483_647 * 2);
      expect(fn).not.toHaveBeenCalled();
      vi.advanceTimersByTime(2_147_483_647);
      expect(fn).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
