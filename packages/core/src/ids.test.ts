import { describe, expect, it } from "vitest";
import { ManualClock } from "./clock.js";
import { createIdGenerator, idFloor, messageIdBound } from "./ids.js";

const ID = /^att_[0-9a-hjkmnp-tv-z]{26}$/;

describe("createIdGenerator", () => {
  it("makes well-formed ids that sort in creation order, within and across milliseconds", () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 30));
    const newId = createIdGenerator(clock);
    const ids: string[] = [];
    for (let ms = 0; ms < 50; ms++) {
      for (let i = 0; i < 20; i++) ids.push(newId("att"));
      clock.advance(1);
    }
    for (const id of ids) expect(id).toMatch(ID);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("stays unique and random across many refills of its random pool", () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 30));
    const newId = createIdGenerator(clock);
    const ids = new Set<string>();
    // A new millisecond per id takes 16 fresh random bytes each: 10,000 of them refill the pool ~40 times.
    for (let i = 0; i < 10_000; i++) {
      ids.add(newId("att"));
      clock.advance(1);
    }
    expect(ids.size).toBe(10_000);
    const randomParts = new Set([...ids].map((id) => id.slice(-16)));
    expect(randomParts.size).toBe(10_000);
  });
});

describe("idFloor", () => {
  it("sorts after every id made before its time and at or before every id made at or after it", () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 30));
    const newId = createIdGenerator(clock);
    const earlier = Array.from({ length: 5 }, () => newId("att"));
    clock.advance(1);
    const floor = idFloor("att", clock.now());
    const later = Array.from({ length: 5 }, () => {
      clock.advance(997);
      return newId("att");
    });
    for (const id of earlier) expect(id < floor).toBe(true);
    for (const id of later) expect(id >= floor).toBe(true);
  });
});

describe("messageIdBound", () => {
  it("sorts above every message id made before its time and below every one made at or after it", () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 30));
    const newId = createIdGenerator(clock);
    const before = Array.from({ length: 100 }, () => newId("msg"));
    clock.advance(1);
    const bound = messageIdBound(clock.now());
    const after = Array.from({ length: 100 }, () => newId("msg"));
    for (const id of before) expect(id < bound).toBe(true);
    for (const id of after) expect(id > bound).toBe(true);
  });
});
