import { describe, expect, test } from "vitest";
import { ManualClock } from "../clock.js";
import { ConcurrencyBudget } from "./concurrency-budget.js";

function budget(min: number, max: number) {
  const clock = new ManualClock();
  let load = 0.1;
  const b = new ConcurrencyBudget(min, max, clock, () => load);
  b.start();
  /** One 100 ms interval in which `done` requests complete; work was held back when `full`. */
  const interval = (done: number, full = true) => {
    for (let i = 0; i < done; i++) b.completed();
    if (full) b.full();
    clock.advance(100);
    return b.value;
  };
  return { clock, interval, setLoad: (l: number) => (load = l) };
}

describe("ConcurrencyBudget", () => {
  test("grows fourfold while a bigger pool gets more done, up to max", () => {
    const { interval } = budget(128, 1024);
    // Slow receivers: what gets done follows the budget, so every step up is kept.
    expect(interval(100)).toBe(512);
    expect([interval(100), interval(400), interval(400)]).toEqual([512, 512, 512]); // warm-up, judged
    expect(interval(400)).toBe(1024);
    for (let i = 0; i < 6; i++) expect(interval(800)).toBe(1024);
  });

  test("undoes a step that got no more done, then holds for a second, twice as long after each miss", () => {
    const { interval } = budget(128, 1024);
    expect(interval(1000)).toBe(512);
    expect([interval(1000), interval(1000), interval(1050)]).toEqual([512, 512, 128]);
    for (let i = 0; i < 9; i++) expect(interval(1000)).toBe(128);
    expect(interval(1000)).toBe(512); // tries again
    expect([interval(1000), interval(1000), interval(1000)]).toEqual([512, 512, 128]);
    for (let i = 0; i < 19; i++) expect(interval(1000)).toBe(128);
    expect(interval(1000)).toBe(512);
  });

  test("does not grow while this process's CPU is busy", () => {
    const { interval, setLoad } = budget(128, 1024);
    setLoad(0.95);
    for (let i = 0; i < 5; i++) expect(interval(100)).toBe(128);
  });

  test("halves once nothing has pressed for ten seconds", () => {
    const { clock, interval } = budget(128, 1024);
    expect(interval(100)).toBe(512);
    interval(100);
    interval(400);
    expect(interval(400, false)).toBe(512); // kept
    clock.advance(9_800); // ten seconds since work was last held back
    expect(interval(0, false)).toBe(256);
    clock.advance(9_900);
    expect(interval(0, false)).toBe(128);
  });

  test("a fixed budget never changes", () => {
    const { interval } = budget(64, 64);
    for (let i = 0; i < 10; i++) expect(interval(i * 100)).toBe(64);
  });
});
