import { expect, test } from "vitest";
import { seededRandom } from "../../random.js";
import { smallest } from "./smallest.js";

test("returns the k smallest in order, equal to sorting and slicing, ties in input order", () => {
  const random = seededRandom(3);
  const items = Array.from({ length: 500 }, (_, i) => ({ key: Math.floor(random() * 50), i }));
  const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;
  for (const k of [0, 1, 7, 64, 500, 600]) {
    expect(smallest(items, k, byKey)).toEqual([...items].sort(byKey).slice(0, k));
  }
});
