import { describe, expect, test } from "vitest";
import { ManualClock } from "../clock.js";
import { FairShare } from "./fair-share.js";

function share(budget = 120) {
  const clock = new ManualClock();
  return { clock, fair: new FairShare(clock, () => budget) };
}

describe("FairShare", () => {
  test("an endpoint alone gets the whole budget", () => {
    const { fair } = share();
    fair.present(["a"]);
    expect(fair.room("a")).toBe(120);
  });

  test("endpoints with work split the budget equally; its own maxInFlight lowers an endpoint's cap", () => {
    const { fair } = share();
    fair.present(["a", "b", "c"]);
    expect(fair.cap("a")).toBe(40);
    expect(fair.cap("b", 5)).toBe(5);
    for (let i = 0; i < 40; i++) fair.acquire("a");
    expect(fair.room("a")).toBe(0);
    expect(fair.saturated()).toEqual(["a"]);
  });

  test("for a slow or unmeasured endpoint, every endpoint claimed in the last second still counts", () => {
    const { clock, fair } = share();
    fair.present(["hung", "fast"]);
    fair.claimed();
    fair.acquire("hung");
    // "fast" has nothing in flight right now, but had work a moment ago: "hung" may not take its half.
    clock.advance(999);
    expect(fair.cap("hung")).toBe(60);
    clock.advance(1);
    expect(fair.cap("hung")).toBe(120);
  });

  test("a quick endpoint gets what the others with work now leave, at least an equal share", () => {
    const { clock, fair } = share();
    fair.present(["busy", "quiet"]);
    fair.acquire("busy");
    fair.release("busy", 5); // answered in 5 ms: quick
    fair.acquire("quiet");
    fair.claimed();
    expect(fair.cap("busy")).toBe(119); // "quiet" has one request in flight and wants no more
    fair.release("quiet", 5);
    clock.advance(1);
    expect(fair.cap("busy")).toBe(120); // "quiet" is done: it takes nothing between its requests
    fair.heldBack("quiet");
    expect(fair.cap("busy")).toBe(60); // work of "quiet" is waiting: an equal share each
    fair.present(["other", "other", "other"]);
    // Three with work: "quiet" may take its 40, "other" holds 3 deliveries; "busy" gets the rest.
    expect(fair.cap("busy")).toBe(77);
  });

  test("endpoints answering in tens or hundreds of milliseconds wait on the network; local and slow ones do not", () => {
    const { fair } = share();
    for (const [id, ms] of [
      ["internet", 100],
      ["local", 2],
      ["slow", 5_000],
    ] as const) {
      fair.acquire(id);
      fair.release(id, ms);
    }
    expect([fair.waiting("internet"), fair.waiting("local"), fair.waiting("slow")]).toEqual([
      true,
      false,
      false,
    ]);
    for (let i = 0; i < 3; i++) fair.acquire("internet");
    for (let i = 0; i < 3; i++) fair.acquire("local");
    expect(fair.mostlyWaiting()).toBe(true);
    fair.acquire("local");
    expect(fair.mostlyWaiting()).toBe(false);
  });

  test("an endpoint whose latency grew past twice its lowest is queueing, not waiting on the network", () => {
    const { clock, fair } = share();
    fair.acquire("busy");
    fair.release("busy", 25);
    expect(fair.waiting("busy")).toBe(true);
    for (let i = 0; i < 10; i++) {
      fair.acquire("busy");
      fair.release("busy", 80); // requests queue: 25 ms became 80
    }
    expect(fair.waiting("busy")).toBe(false);
    clock.advance(10_000); // the lowest is measured afresh
    fair.acquire("busy");
    fair.release("busy", 80);
    expect(fair.waiting("busy")).toBe(true);
  });

  test("hung, trickling and slow endpoints are never quick", () => {
    const { fair } = share();
    fair.acquire("slow");
    fair.release("slow", 10_000);
    fair.acquire("hung");
    fair.release("hung", null);
    expect(fair.quick("slow")).toBe(false);
    expect(fair.quick("hung")).toBe(false);
  });
});
