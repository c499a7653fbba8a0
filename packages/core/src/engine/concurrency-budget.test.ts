import { describe, expect, test } from "vitest";
import { ManualClock } from "../clock.js";
import { ConcurrencyBudget } from "./concurrency-budget.js";

function budget(min: number, max: number) {
  const clock = new ManualClock();
  const b = new ConcurrencyBudget(min, max, clock);
  b.start();
  /** One 100 ms interval, pressed on or not. */
  const interval = (pressed: boolean) => {
    if (pressed) b.press();
    clock.advance(100);
    return b.value;
  };
  return { clock, interval };
}

describe("ConcurrencyBudget", () => {
  test("grows fourfold every interval it is pressed on, up to max", () => {
    const { interval } = budget(128, 1024);
    expect(interval(false)).toBe(128);
    expect(interval(true)).toBe(512);
    expect(interval(false)).toBe(512);
    expect(interval(true)).toBe(1024);
    expect(interval(true)).toBe(1024);
  });

  test("halves after ten seconds without pressure, and again ten seconds later, down to min", () => {
    const { clock, interval } = budget(128, 1024);
    interval(true);
    interval(true); // last pressed on at 100 ms
    clock.advance(9_700);
    expect(interval(false)).toBe(1024); // 9.9 s later
    expect(interval(false)).toBe(512);
    clock.advance(9_900);
    expect(interval(false)).toBe(256);
    clock.advance(20_000);
    expect(interval(false)).toBe(128);
  });

  test("a fixed budget never changes", () => {
    const { interval } = budget(64, 64);
    for (let i = 0; i < 10; i++) expect(interval(true)).toBe(64);
  });
});
