import { performance } from "node:perf_hooks";
import { expect } from "vitest";
import type { OutboundOptions } from "../../config/options.js";
import { group, type Scenario, type ScenarioContext } from "./context.js";
import type { Reply, ScenarioReceiver } from "./receiver.js";

const HEALTHY = ["/a", "/b", "/c"];
// A fixed pool of 16 over the slow endpoint and three healthy ones: each endpoint's share is 4.
const POOL: Partial<OutboundOptions> = {
  workers: { concurrency: 16, batchSize: 16, pollInterval: "20ms" },
  circuitBreaker: false,
  autoDisable: false,
};

// Messages per healthy endpoint in the share tests: each must be through before the slow requests
// are answered or time out and free their slots, which a loaded CI machine missed with 60 on SQLite's
// one writer.
const MESSAGES = 30;
// The share tests' slow requests take 6 s (or time out at 8 s), and the healthy endpoints must have
// everything within 5.5 s: far above the ~0.2 s they take on a quiet machine. With 1.5 s and 2 s, a CI
// machine at load average 10 got only 20 of 30 through on SQLite within the 1.4 s left.
const SLOW_MS = 6_000;
const WITHIN_MS = 5_500;
const SHARE_POOL: Partial<OutboundOptions> = { ...POOL, http: { timeout: "8s" } };

/** Resolves with the real milliseconds until every path in `paths` has `count` distinct webhook-ids. */
async function received(
  receiver: ScenarioReceiver,
  paths: string[],
  count: number,
  ms: number,
): Promise<number> {
  const started = performance.now();
  const distinct = (path: string) => new Set(receiver.on(path).map((r) => r.webhookId)).size;
  while (paths.some((path) => distinct(path) < count)) {
    if (performance.now() - started > ms) {
      const got = paths.map((path) => `${path}: ${distinct(path)}`).join(", ");
      throw new Error(`after ${ms} ms only ${got} of ${count} each`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - started;
}

/** When the healthy endpoints' last request arrived: until then they had work. */
function healthyUntil(receiver: ScenarioReceiver): number {
  return Math.max(...HEALTHY.flatMap((p) => receiver.on(p).map((r) => r.arrivedAt)));
}

/** Requests to `path` that arrived while the healthy endpoints still had work. */
function whileOthersWorked(receiver: ScenarioReceiver, path: string): number {
  const last = healthyUntil(receiver);
  return receiver.on(path).filter((r) => r.arrivedAt <= last).length;
}

/**
 * The most requests to `path` open at once (arriving up to `until`), when each is answered `holdMs`
 * after it arrived. A request counts as open for `holdMs` less 10 ms: timers may fire a little early.
 */
function peakConcurrency(receiver: ScenarioReceiver, path: string, holdMs: number, until = Infinity): number {
  const arrivals = receiver
    .on(path)
    .map((r) => r.arrivedAt)
    .filter((t) => t <= until);
  const open = holdMs - 10;
  return Math.max(0, ...arrivals.map((t) => arrivals.filter((u) => u <= t && u > t - open).length));
}

/**
 * Runs `fn` while the scenario's manual clock moves along with real time, so the running workers'
 * timers (polling, the outcome linger) fire as they would in production.
 */
async function ticking<T>(s: Scenario, fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => s.clock.advance(10), 10);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/**
 * Endpoint isolation: one slow, hung or failing endpoint costs only its own share of the pool, work
 * held back by a share or a limit is not an attempt, and `maxInFlight` / `rateLimit` hold across every
 * instance on the storage.
 */
export function isolationScenarios(context: ScenarioContext): void {
  async function fleet(slow: Reply, outbound: Partial<OutboundOptions> = POOL) {
    const s = await context.start(outbound);
    s.receiver.script("/slow", slow);
    return s;
  }

  async function subscribeAll(s: Scenario): Promise<void> {
    for (const path of ["/slow", ...HEALTHY])
      await s.postel.outbound.endpoints.create({ url: s.receiver.url(path) });
  }

  group(context, "isolation", (test) => {
    for (const [name, reply] of [
      ["hangs", "hang"],
      ["trickles its response one byte a second", "trickle"],
      ["answers 200 after 6 s", { status: 200, delayMs: SLOW_MS }],
    ] as const) {
      test(`an endpoint that ${name} holds only its share of the pool; the healthy ones get everything meanwhile`, async () => {
        const s = await fleet(reply, SHARE_POOL);
        await subscribeAll(s);
        for (let i = 0; i < MESSAGES; i++)
          await s.postel.outbound.send({ type: "order.created", data: { i } });
        await ticking(s, async () => {
          await s.postel.start();
          // The slow requests take 6 s or time out at 8 s; every healthy delivery is through before that.
          expect(await received(s.receiver, HEALTHY, MESSAGES, WITHIN_MS)).toBeLessThan(WITHIN_MS);
        });
        expect(whileOthersWorked(s.receiver, "/slow")).toBeLessThanOrEqual(4);
      });
    }

    test("a hung endpoint holds only its share when each message goes to one endpoint (the direct path)", async () => {
      const s = await fleet("hang", SHARE_POOL);
      for (const path of ["/slow", ...HEALTHY]) {
        await s.postel.outbound.endpoints.create({ url: s.receiver.url(path), types: [path.slice(1)] });
      }
      for (let i = 0; i < MESSAGES; i++) {
        for (const path of ["/slow", ...HEALTHY])
          await s.postel.outbound.send({ type: path.slice(1), data: { i } });
      }
      await ticking(s, async () => {
        await s.postel.start();
        expect(await received(s.receiver, HEALTHY, MESSAGES, WITHIN_MS)).toBeLessThan(WITHIN_MS);
      });
      expect(whileOthersWorked(s.receiver, "/slow")).toBeLessThanOrEqual(4);
    });

    test("two instances on one storage each give a hung endpoint only its share", async () => {
      const s = await fleet("hang", SHARE_POOL);
      const other = await context.start(SHARE_POOL);
      await subscribeAll(s);
      for (let i = 0; i < MESSAGES; i++) await s.postel.outbound.send({ type: "order.created", data: { i } });
      await ticking(s, async () => {
        await Promise.all([s.postel.start(), other.postel.start()]);
        expect(await received(s.receiver, HEALTHY, MESSAGES, WITHIN_MS)).toBeLessThan(WITHIN_MS);
      });
      expect(whileOthersWorked(s.receiver, "/slow")).toBeLessThanOrEqual(8);
    });

    test("deliveries held back by a share are not attempts: no retry spent, one attempt each", async () => {
      const s = await fleet({ status: 200, delayMs: 150 });
      await subscribeAll(s);
      const ids: string[] = [];
      for (let i = 0; i < 24; i++) ids.push((await s.postel.outbound.send({ type: "a", data: { i } })).id);
      let delivered = 0;
      const all = new Promise<void>((resolve) =>
        s.postel.on("delivered", () => {
          if (++delivered === 96) resolve();
        }),
      );
      await ticking(s, async () => {
        await s.postel.start();
        await all;
      });
      expect(s.receiver.on("/slow")).toHaveLength(24);
      // A quick endpoint alone may take the whole pool: count only while the others had work.
      expect(peakConcurrency(s.receiver, "/slow", 150, healthyUntil(s.receiver))).toBeLessThanOrEqual(4);
      for (const id of ids) {
        expect(await s.postel.outbound.messages.attempts(id)).toHaveLength(4);
        for (const delivery of await s.postel.outbound.messages.deliveries(id)) {
          expect(delivery).toMatchObject({ status: "succeeded", retriesUsed: 0, attemptsMade: 1 });
        }
      }
    });
  });

  group(context, "limits", (test) => {
    test("an endpoint's maxInFlight holds across two instances", async () => {
      const s = await fleet({ status: 200, delayMs: 100 }, { workers: { pollInterval: "20ms" } });
      const other = await context.start({ workers: { pollInterval: "20ms" } });
      await s.postel.outbound.endpoints.create({ url: s.receiver.url("/slow"), maxInFlight: 3 });
      for (let i = 0; i < 30; i++) await s.postel.outbound.send({ type: "a", data: { i } });
      await ticking(s, async () => {
        await Promise.all([s.postel.start(), other.postel.start()]);
        await received(s.receiver, ["/slow"], 30, 10_000);
      });
      expect(peakConcurrency(s.receiver, "/slow", 100)).toBeLessThanOrEqual(3);
      expect(peakConcurrency(s.receiver, "/slow", 100)).toBeGreaterThanOrEqual(2);
    });

    test("the global maxInFlight default applies to endpoints without their own", async () => {
      const s = await fleet(
        { status: 200, delayMs: 100 },
        { workers: { pollInterval: "20ms" }, limits: { maxInFlight: 2 } },
      );
      await s.postel.outbound.endpoints.create({ url: s.receiver.url("/slow") });
      for (let i = 0; i < 12; i++) await s.postel.outbound.send({ type: "a", data: { i } });
      await ticking(s, async () => {
        await s.postel.start();
        await received(s.receiver, ["/slow"], 12, 10_000);
      });
      expect(peakConcurrency(s.receiver, "/slow", 100)).toBe(2);
    });

    test("an endpoint's rateLimit holds across two instances, and what it holds back is not an attempt", async () => {
      const s = await fleet(200);
      const other = await context.start();
      await s.postel.outbound.endpoints.create({ url: s.receiver.url("/slow"), rateLimit: 2 });
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push((await s.postel.outbound.send({ type: "a", data: { i } })).id);
      const both = async () => {
        await s.postel.drain();
        await other.postel.drain();
        return s.receiver.on("/slow").length;
      };
      expect(await both()).toBe(2); // a full bucket: one second's worth
      s.clock.advance(499);
      expect(await both()).toBe(2);
      s.clock.advance(1);
      expect(await both()).toBe(3);
      s.clock.advance(1_500); // three tokens' worth of time, but a bucket holds two
      expect(await both()).toBe(5);
      s.clock.advance(10_000);
      expect(await both()).toBe(7);
      for (const id of ids) {
        const [delivery] = await s.postel.outbound.messages.deliveries(id);
        expect(delivery).toMatchObject({ status: "succeeded", retriesUsed: 0, attemptsMade: 1 });
      }
    });
  });
}
