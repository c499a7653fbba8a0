import { expect, test } from "vitest";
import { defaultRandom, seededRandom } from "./random.js";

test("the same seed yields the same sequence", () => {
  const a = seededRandom(42);
  const b = seededRandom(42);
  const seqA = Array.from({ length: 5 }, a);
  expect(Array.from({ length: 5 }, b)).toEqual(seqA);
  expect(new Set(seqA).size).toBe(5);
});

test("different seeds yield different sequences", () => {
  expect(seededRandom(1)()).not.toBe(seededRandom(2)());
});

test.each([0, 1, 42, -7, 2 ** 32 + 5])("seed %d stays in [0, 1) and spreads across the range", (seed) => {
  const random = seededRandom(seed);
  const values = Array.from({ length: 2_000 }, random);
  expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
  expect(Math.max(...values)).toBeLessThan(1);
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  expect(mean).toBeGreaterThan(0.45);
  expect(mean).toBeLessThan(0.55);
  expect(values.filter((v) => v < 0.1).length).toBeGreaterThan(100);
  expect(values.filter((v) => v >= 0.9).length).toBeGreaterThan(100);
});

test("defaultRandom is Math.random", () => {
  expect(defaultRandom).toBe(Math.random);
});
