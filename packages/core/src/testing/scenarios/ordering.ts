import { expect } from "vitest";
import { ExponentialBackoff } from "../../backoff.js";
import type { OutboundOptions } from "../../config/options.js";
import { group, type Scenario, type ScenarioContext } from "./context.js";
import type { Reply, ScenarioReceiver } from "./receiver.js";

// No breaker or auto-disable: these tests are about the key rule, and a receiver failing a fifth of
// requests must not open the circuit. Retries every second (of the manual clock), enough of them that
// nothing dead-letters at a 20% failure rate (0.2^30).
const ORDERED: Partial<OutboundOptions> = {
  circuitBreaker: false,
  autoDisable: false,
  retryPolicy: ExponentialBackoff({ schedule: ["1s"], maxAttempts: 30, jitter: 0 }),
  workers: { batchSize: 100 },
};

/** The `{ k, i }` a request carries (the event's data). */
function keyAndIndex(body: Buffer): { k: string; i: number } {
  return (JSON.parse(body.toString("utf8")) as { data: { k: string; i: number } }).data;
}

/** Sends `perKey` messages for each key, round-robin across keys (so a key's sends interleave with others'). */
async function sendRounds(
  postel: Scenario["postel"],
  keys: string[],
  perKey: number,
  from = 0,
): Promise<void> {
  for (let i = from; i < from + perKey; i++) {
    await postel.outbound.sendBatch(
      keys.map((k) => ({ type: "sub.updated", data: { k, i }, orderingKey: k })),
    );
  }
}

/**
 * Drains every instance at once, then moves the clock a second for the retries, until a drain finds
 * nothing to do and nothing is scheduled.
 */
async function drainAll(instances: Scenario[], rounds = 400): Promise<void> {
  const [first] = instances;
  for (let round = 0; round < rounds; round++) {
    const results = await Promise.all(instances.map((s) => s.postel.drain()));
    const stats = await first!.postel.outbound.stats({ exact: true });
    const busy = results.some(
      (r) => r.fannedOut > 0 || r.succeeded + r.retry + r.failed + r["dead-lettered"] > 0,
    );
    if (!busy && stats.backlog.scheduled === 0 && stats.backlog.due === 0 && stats.backlog.unfanned === 0)
      return;
    first!.clock.advance("1s");
  }
  throw new Error(`drainAll: still busy after ${rounds} rounds`);
}

/**
 * Checks that each key's requests arrived in send order, one message at a time: a request for a
 * key's message `i` arrives only after every earlier message of the key got its 2xx, so each key's
 * first successful receipts are in send order. A message may arrive again after its own 2xx (delivery
 * is at-least-once: an answer that came after the request timed out on a loaded machine is a
 * failure to the sender), never before. `ok(index)` says whether the request at that index on `path`
 * was answered 2xx.
 */
function expectKeyOrder(
  receiver: ScenarioReceiver,
  path: string,
  ok: (index: number) => boolean,
): Map<string, number> {
  const next = new Map<string, number>();
  const problems: string[] = [];
  receiver.on(path).forEach((request, index) => {
    const { k, i } = keyAndIndex(request.body);
    const expected = next.get(k) ?? 0;
    if (i > expected) problems.push(`key ${k}: message ${i} arrived while ${expected} was not yet delivered`);
    if (ok(index) && i === expected) next.set(k, i + 1);
  });
  expect(problems.slice(0, 5)).toEqual([]);
  return next;
}

/** A reply script failing about `rate` of requests with 500, deterministically; `answers` records each status. */
function flaky(rate: number, answers: number[], seed = 12345): (index: number) => Reply {
  let state = seed;
  return (index) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    const status = state / 2147483648 < rate ? 500 : 200;
    answers[index] = status;
    return status;
  };
}

/** Ordered delivery per key, end to end: real receivers, two Postel instances on one storage, the manual clock. */
export function orderingScenarios(context: ScenarioContext): void {
  group(context, "ordering", (test) => {
    test("100 keys × 50 messages, two instances, a receiver failing 20% at random: each key's messages arrive one at a time, in send order", async () => {
      const a = await context.start(ORDERED);
      const b = await context.start(ORDERED);
      const answers: number[] = [];
      a.receiver.script("/ordered", flaky(0.2, answers));
      await a.postel.outbound.endpoints.create({ url: a.receiver.url("/ordered") });
      const keys = Array.from({ length: 100 }, (_, n) => `sub_${n}`);
      await sendRounds(a.postel, keys, 50);
      await drainAll([a, b]);
      const delivered = expectKeyOrder(a.receiver, "/ordered", (index) => answers[index] === 200);
      expect([...delivered.values()].filter((n) => n === 50)).toHaveLength(100);
      // The failures were real: retries happened, and they held their keys.
      expect(answers.filter((s) => s === 500).length).toBeGreaterThan(500);
      const stats = await a.postel.outbound.stats({ exact: true });
      expect(stats.ordering).toEqual({ waiting: 0, heldKeys: [] });
    }, 240_000);

    test("a key whose head keeps failing holds only itself: the endpoint's other keys, the key on other endpoints and unordered messages flow", async () => {
      const s = await context.start(ORDERED);
      s.receiver.script("/hook", (index) => {
        const request = s.receiver.on("/hook")[index]!;
        const data = JSON.parse(request.body.toString("utf8")).data as { k?: string };
        return data.k === "stuck" ? 503 : 200;
      });
      await s.postel.outbound.endpoints.create({ url: s.receiver.url("/hook") });
      // Another endpoint, down for good, gets every key: it holds only its own (endpoint, key) pairs.
      s.receiver.script("/down", 503);
      await s.postel.outbound.endpoints.create({ url: s.receiver.url("/down") });
      const keys = ["stuck", ...Array.from({ length: 20 }, (_, n) => `k${n}`)];
      await sendRounds(s.postel, keys, 10);
      await s.postel.outbound.send({ type: "sub.updated", data: { unordered: true } });
      await s.postel.drain();
      const down = s.receiver.on("/down").map((r) => keyAndIndex(r.body));
      expect(down.filter((d) => d.k !== undefined).every((d) => d.i === 0)).toBe(true);
      expect(new Set(down.map((d) => d.k)).size).toBe(keys.length + 1);
      const seen = s.receiver.on("/hook").map((r) => keyAndIndex(r.body));
      // Everything else is through after one drain; the stuck key has tried only its first message.
      for (const k of keys.slice(1))
        expect(seen.filter((d) => d.k === k).map((d) => d.i)).toEqual([...Array(10).keys()]);
      expect(seen.filter((d) => d.k === undefined)).toHaveLength(1);
      expect(seen.filter((d) => d.k === "stuck").map((d) => d.i)).toEqual([0]);
      const stats = await s.postel.outbound.stats({ exact: true });
      // 9 behind the stuck key here; 9 behind each of the 21 keys on the endpoint that is down.
      expect(stats.ordering!.waiting).toBe(9 + 21 * 9);
      expect(stats.backlog.scheduled).toBe(1 + 22);
      // A minute of retries later: still only its head.
      for (let n = 0; n < 5; n++) {
        s.clock.advance("1s");
        await s.postel.drain();
      }
      expect(
        s.receiver
          .on("/hook")
          .map((r) => keyAndIndex(r.body))
          .filter((d) => d.k === "stuck")
          .every((d) => d.i === 0),
      ).toBe(true);
    });

    test('onKeyFailure "hold": a head that fails for good holds its key, new messages included, until skipped; the rest go in order', async () => {
      const s = await context.start(ORDERED);
      // The key's first message is refused for good (400), everything else is taken.
      s.receiver.script("/hold", (index) => {
        const { k, i } = keyAndIndex(s.receiver.on("/hold")[index]!.body);
        return k === "h" && i === 0 ? 400 : 200;
      });
      const endpoint = await s.postel.outbound.endpoints.create({
        url: s.receiver.url("/hold"),
        onKeyFailure: "hold",
      });
      await sendRounds(s.postel, ["h", "free"], 3);
      await s.postel.drain();
      const keysOf = () => s.receiver.on("/hold").map((r) => keyAndIndex(r.body));
      expect(
        keysOf()
          .filter((d) => d.k === "h")
          .map((d) => d.i),
      ).toEqual([0]);
      expect(
        keysOf()
          .filter((d) => d.k === "free")
          .map((d) => d.i),
      ).toEqual([0, 1, 2]);

      const { items } = await s.postel.outbound.orderingKeys.held();
      expect(items).toMatchObject([
        { endpointId: endpoint.id, orderingKey: "h", status: "failed", waiting: 2 },
      ]);
      const stats = await s.postel.outbound.stats();
      expect(stats.ordering!.heldKeys.map((k) => k.orderingKey)).toEqual(["h"]);
      expect(stats.ordering!.waiting).toBe(2);

      // A message sent while the key is held waits behind it too.
      await sendRounds(s.postel, ["h"], 1, 3);
      s.clock.advance("1h");
      await s.postel.drain();
      expect(
        keysOf()
          .filter((d) => d.k === "h")
          .map((d) => d.i),
      ).toEqual([0]);

      await expect(s.postel.outbound.orderingKeys.skip(endpoint.id, "nope")).rejects.toMatchObject({
        code: "KEY_NOT_HELD",
      });
      const skipped = await s.postel.outbound.orderingKeys.skip(endpoint.id, "h");
      expect(skipped).toEqual({
        endpointId: endpoint.id,
        orderingKey: "h",
        skippedDeliveryId: items[0]!.deliveryId,
      });
      await s.postel.drain();
      expect(
        keysOf()
          .filter((d) => d.k === "h")
          .map((d) => d.i),
      ).toEqual([0, 1, 2, 3]);
      expect((await s.postel.outbound.orderingKeys.held()).items).toEqual([]);
    });

    test("replaying a held head releases its key in place: the head goes first, then the messages that waited", async () => {
      const s = await context.start(ORDERED);
      let refuse = true;
      s.receiver.script("/replay", (index) => {
        const { i } = keyAndIndex(s.receiver.on("/replay")[index]!.body);
        return refuse && i === 0 ? 410 : 200;
      });
      await s.postel.outbound.endpoints.create({ url: s.receiver.url("/replay"), onKeyFailure: "hold" });
      await sendRounds(s.postel, ["r"], 3);
      await s.postel.drain();
      const [held] = (await s.postel.outbound.orderingKeys.held()).items;
      expect(held).toMatchObject({ orderingKey: "r", waiting: 2 });
      refuse = false;
      const replayed = await s.postel.outbound.replay({ deliveryIds: [held!.deliveryId] });
      expect(replayed).toHaveLength(1);
      await s.postel.drain();
      const order = s.receiver.on("/replay").map((r) => keyAndIndex(r.body).i);
      expect(order).toEqual([0, 0, 1, 2]);
    });

    test("by default a dead-lettered head lets its key move on, in order", async () => {
      const s = await context.start({
        ...ORDERED,
        retryPolicy: ExponentialBackoff({ schedule: ["1s"], maxAttempts: 2, jitter: 0 }),
      });
      s.receiver.script("/skip", (index) =>
        keyAndIndex(s.receiver.on("/skip")[index]!.body).i === 1 ? 500 : 200,
      );
      await s.postel.outbound.endpoints.create({ url: s.receiver.url("/skip") });
      await sendRounds(s.postel, ["d"], 4);
      await drainAll([s]);
      // Message 1 is tried three times (two retries), dead-letters, and the key goes on.
      expect(s.receiver.on("/skip").map((r) => keyAndIndex(r.body).i)).toEqual([0, 1, 1, 1, 2, 3]);
      expect((await s.postel.outbound.deadLetters.list()).items).toHaveLength(1);
    });
  });
}
