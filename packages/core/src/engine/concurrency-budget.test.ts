import { describe, expect, test } from "vitest";
import { ManualClock } from "../clock.js";
import { ConcurrencyBudget } from "./concurrency-budget.js";

function budget(min: number, max: number) {
  const clock = new ManualClock();
  const b = new ConcurrencyBudget(min, max, clock);
  b.start();
  // A pool's first half second never steps up (it warms up by itself): start the tests after it.
  clock.advance(500);
  /** One 100 ms interval in which `done` requests complete, pressed on or not. */
  const interval = (done: number, pressed = true) => {
    for (let i = 0; i < done; i++) b.completed();
    if (pressed) b.press();
    clock.advance(100);
    return b.value;
  };
  return { clock, interval };
}

describe("ConcurrencyBudget", () => {
  test("does not step up in a pool's first half second", () => {
    const clock = new ManualClock();
    const b = new ConcurrencyBudget(128, 1024, clock);
    b.start();
    for (let i = 0; i < 4; i++) {
      b.press();
      clock.advance(100);
      expect(b.value).toBe(128);
    }
    b.press();
    clock.advance(100);
    expect(b.value).toBe(512);
  });

  test("steps up fourfold when pressed on, and keeps each step that got more done, up to max", () => {
    const { interval } = budget(128, 1024);
    expect(interval(100, false)).toBe(128);
    expect(interval(100)).toBe(512);
    expect(interval(100)).toBe(512); // warm-up
    for (let i = 0; i < 4; i++) expect(interval(400)).toBe(512); // judged: four times as much done
    expect(interval(400)).toBe(1024);
    for (let i = 0; i < 8; i++) expect(interval(800)).toBe(1024);
  });

  test("goes back on a step that got no more done, then holds for a second, twice as long after each miss", () => {
    const { interval } = budget(128, 1024);
    const trial = () => [0, 1, 2, 3, 4].map(() => interval(1050)); // warm-up, then four judged
    for (let i = 0; i < 3; i++) interval(1000, false);
    expect(interval(1000)).toBe(512);
    expect(trial()).toEqual([512, 512, 512, 512, 128]); // 5% more is not worth it
    for (let i = 0; i < 9; i++) expect(interval(1000)).toBe(128);
    expect(interval(1000)).toBe(512); // tries again
    expect(trial()).toEqual([512, 512, 512, 512, 128]);
    for (let i = 0; i < 19; i++) expect(interval(1000)).toBe(128);
    expect(interval(1000)).toBe(512);
  });

  test("halves after ten seconds without pressure, and again ten seconds later, down to min", () => {
    const { clock, interval } = budget(128, 1024);
    expect(interval(100)).toBe(512);
    for (let i = 0; i < 4; i++) interval(400, false);
    expect(interval(400, false)).toBe(512); // kept
    clock.advance(9_200); // 9.9 s after the press
    expect(interval(0, false)).toBe(512);
    expect(interval(0, false)).toBe(256);
    clock.advance(20_000);
    expect(interval(0, false)).toBe(128);
  });

  test("a fixed budget never changes", () => {
    const { interval } = budget(64, 64);
    for (let i = 0; i < 10; i++) expect(interval(i * 100)).toBe(64);
  });
});
