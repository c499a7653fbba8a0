import { describe, expect, test } from "vitest";
import { ManualClock } from "../clock.js";
import { DueWork } from "./due-work.js";

const POLL_MS = 1_000;

function tracker() {
  const clock = new ManualClock();
  const due = new DueWork(clock, () => POLL_MS);
  /** One claim's look: begun, and ended with `found` of `asked`. */
  const look = (found: number, asked = 10, skipped = false) => {
    due.looking();
    due.looked(found, asked, skipped);
  };
  return { clock, due, look };
}

describe("DueWork", () => {
  test("looks at once, then, after a look that found less than it asked, only once a poll interval passed", () => {
    const { clock, due, look } = tracker();
    expect(due.worthLooking()).toBe(true);
    look(3);
    expect(due.worthLooking()).toBe(false);
    clock.advance(POLL_MS - 1);
    expect(due.worthLooking()).toBe(false);
    clock.advance(1);
    expect(due.worthLooking()).toBe(true);
  });

  test("a full look, or one that left saturated endpoints out, is followed by another at the next claim", () => {
    const { due, look } = tracker();
    look(10, 10);
    expect(due.worthLooking()).toBe(true);
    look(0, 10, true);
    expect(due.worthLooking()).toBe(true);
    look(0, 10);
    expect(due.worthLooking()).toBe(false);
  });

  test("work recorded to fall due is looked for from that moment, each time on its own", () => {
    const { clock, due, look } = tracker();
    look(0);
    const t = clock.now();
    due.expect(t + 300);
    due.expect(t + 700);
    expect(due.worthLooking()).toBe(false);
    expect(due.idleMs(POLL_MS)).toBe(300);
    clock.advance(300);
    expect(due.worthLooking()).toBe(true);
    look(1);
    // The first is taken; the second is still expected.
    expect(due.worthLooking()).toBe(false);
    expect(due.idleMs(POLL_MS)).toBe(400);
    clock.advance(400);
    expect(due.worthLooking()).toBe(true);
    look(1);
    expect(due.worthLooking()).toBe(false);
    // Nothing expected: an idle worker waits its poll interval.
    expect(due.idleMs(POLL_MS)).toBe(POLL_MS);
  });

  test("work learnt while a look ran survives it: the look may have begun before that work was written", () => {
    const { clock, due } = tracker();
    due.looking();
    due.expect(clock.now()); // an outcome deferred to now, recorded during the look
    due.looked(0, 10, false);
    expect(due.worthLooking()).toBe(true);
  });

  test("work due later than the poll interval leaves the idle wait at the poll interval", () => {
    const { clock, due, look } = tracker();
    look(0);
    due.expect(clock.now() + 5 * POLL_MS);
    expect(due.idleMs(POLL_MS)).toBe(POLL_MS);
  });

  test("expectations in any order come out earliest first", () => {
    const { clock, due, look } = tracker();
    look(0);
    const t = clock.now();
    const offsets = [500, 100, 900, 300, 700, 200, 800, 600, 400];
    for (const offset of offsets) due.expect(t + offset);
    for (const offset of [...offsets].sort((a, b) => a - b)) {
      expect(due.idleMs(POLL_MS)).toBe(offset - (clock.now() - t));
      clock.advance(offset - (clock.now() - t));
      expect(due.worthLooking()).toBe(true);
      look(1);
    }
    expect(due.idleMs(POLL_MS)).toBe(POLL_MS);
  });
});
