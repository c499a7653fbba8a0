import { describe, expect, test } from "vitest";
import { ManualClock } from "../src/clock.js";
import { isPostelError } from "../src/errors.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import type { Storage } from "../src/storage/storage.js";
import { type Harness, harness } from "./support/harness.js";

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isPostelError(error), `expected a PostelError, got ${String(error)}`).toBe(true);
  return (error as { code: string }).code;
}

describe("send({ orderingKey })", () => {
  test("keeps the key on the message and its deliveries", async () => {
    const { postel, receiver } = await harness();
    await postel.outbound.endpoints.create({ url: receiver.url("/") });
    const { id } = await postel.outbound.send({ type: "sub.created", data: 1, orderingKey: "sub_1" });
    expect(await postel.outbound.messages.get(id)).toMatchObject({ orderingKey: "sub_1" });
    await postel.drain();
    const [delivery] = await postel.outbound.messages.deliveries(id);
    expect(delivery).toMatchObject({ orderingKey: "sub_1", status: "succeeded" });
    const { id: unordered } = await postel.outbound.send({ type: "sub.created", data: 2 });
    expect(await postel.outbound.messages.get(unordered)).not.toHaveProperty("orderingKey");
  });

  test.each([
    ["an empty key", ""],
    ["a key over 255 characters", "k".repeat(256)],
    ["a number", 7],
    ["a key with NUL", "k\u0000"],
    ["a key with a lone surrogate", "k\ud800"],
  ])("refuses %s with INVALID_ARGUMENT and writes nothing", async (_name, orderingKey) => {
    const { postel } = await harness();
    const code = await codeOf(postel.outbound.send({ type: "a", data: 1, orderingKey } as never));
    expect(code).toBe("INVALID_ARGUMENT");
    expect((await postel.outbound.messages.list()).items).toEqual([]);
  });

  test("sendBatch names the bad key's place in the batch", async () => {
    const { postel } = await harness();
    const error = await postel.outbound
      .sendBatch([
        { type: "a", data: 1, orderingKey: "k" },
        { type: "a", data: 2, orderingKey: "" },
      ])
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(String((error as Error).message)).toMatch(/^events\[1\]\.orderingKey: /);
    expect((await postel.outbound.messages.list()).items).toEqual([]);
  });

  test("a storage without the ordering capability refuses a key with ORDERING_UNSUPPORTED, before writing", async () => {
    const { ordering: _ordering, ...rest } = InMemoryStorage();
    const storage = rest as Storage<unknown>;
    const postel = Postel({ clock: new ManualClock(), outbound: { storage } });
    try {
      const error = await postel.outbound
        .send({ type: "a", data: 1, orderingKey: "k" })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "ORDERING_UNSUPPORTED", capability: "ordering" });
      expect((error as Error).message).toMatch(/OrderingStore as storage\.ordering/);
      expect(await postel.outbound.send({ type: "a", data: 1 })).toMatchObject({ reused: false });
      expect(await codeOf(postel.outbound.orderingKeys.held())).toBe("ORDERING_UNSUPPORTED");
      expect((await postel.outbound.stats()).ordering).toBeNull();
    } finally {
      await postel.close();
    }
  });
});

describe("endpoints' onKeyFailure", () => {
  test('defaults to "skip", takes "hold", and refuses anything else before writing', async () => {
    const { postel, receiver } = await harness();
    const endpoint = await postel.outbound.endpoints.create({ url: receiver.url("/") });
    expect(endpoint.onKeyFailure).toBe("skip");
    const held = await postel.outbound.endpoints.update(endpoint.id, { onKeyFailure: "hold" });
    expect(held.onKeyFailure).toBe("hold");
    const error = await postel.outbound.endpoints
      .create({ url: receiver.url("/"), onKeyFailure: "stop" as never })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INVALID_ENDPOINT" });
    expect((error as Error).message).toMatch(/onKeyFailure must be "skip" or "hold"/);
    expect((await postel.outbound.endpoints.list()).items).toHaveLength(1);
  });
});

describe("orderingKeys", () => {
  test("held() pages with a cursor; skip() of a key that is not held is KEY_NOT_HELD and changes nothing", async () => {
    const { postel, receiver, storage } = await harness();
    receiver.script("/", 400);
    const endpoint = await postel.outbound.endpoints.create({ url: receiver.url("/"), onKeyFailure: "hold" });
    for (const key of ["a", "b", "c"]) {
      await postel.outbound.send({ type: "t", data: 1, orderingKey: key });
      await postel.outbound.send({ type: "t", data: 2, orderingKey: key });
    }
    await postel.drain();
    const first = await postel.outbound.orderingKeys.held({ limit: 2 });
    expect(first.items.map((k) => k.orderingKey)).toEqual(["a", "b"]);
    expect(first.nextCursor).not.toBeNull();
    const second = await postel.outbound.orderingKeys.held({ limit: 2, cursor: first.nextCursor! });
    expect(second.items.map((k) => k.orderingKey)).toEqual(["c"]);
    expect(second.nextCursor).toBeNull();
    expect(await codeOf(postel.outbound.orderingKeys.held({ cursor: "nonsense" }))).toBe("INVALID_CURSOR");
    expect(await codeOf(postel.outbound.orderingKeys.skip(endpoint.id, "zzz"))).toBe("KEY_NOT_HELD");
    expect(await codeOf(postel.outbound.orderingKeys.skip("ep_missing", "a"))).toBe("KEY_NOT_HELD");
    expect(await codeOf(postel.outbound.orderingKeys.skip(endpoint.id, 5 as never))).toBe("INVALID_ARGUMENT");
    expect(await storage.ordering.countWaiting({ cap: 100 })).toBe(3);
  });
});

describe("start() with ordering keys", () => {
  test("a key's next delivery comes back leased with its head's outcome: started in order, never claimed", async () => {
    // The manual clock never fires the linger: each outcome is recorded once nothing is in flight.
    const h = await harness({ http: { timeout: "60s" } });
    const claimedKeyed: string[] = [];
    const claimDue = h.storage.claimDue.bind(h.storage);
    h.storage.claimDue = async (lease) => {
      const claimed = await claimDue(lease);
      for (const c of claimed) if (c.delivery.orderingKey !== undefined) claimedKeyed.push(c.delivery.id);
      return claimed;
    };
    let handed = 0;
    const recordOutcomes = h.storage.recordOutcomes.bind(h.storage);
    h.storage.recordOutcomes = async (outcomes, now, next) => {
      const result = await recordOutcomes(outcomes, now, next);
      handed += result.next?.length ?? 0;
      return result;
    };
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    await h.postel.outbound.sendBatch(
      Array.from({ length: 20 }, (_, i) => ({ type: "a", data: { i }, orderingKey: "k" })),
    );
    let delivered = 0;
    const all = new Promise<void>((resolve) =>
      h.postel.on("delivered", () => {
        if (++delivered === 20) resolve();
      }),
    );
    await h.postel.start();
    await all;
    const order = h.receiver
      .on("/hook")
      .map((r) => (JSON.parse(r.body.toString("utf8")) as { data: { i: number } }).data.i);
    expect(order).toEqual([...Array(20).keys()]);
    // One fan-out made the head (leased) and 19 waiting; each end handed the next one over.
    expect(handed).toBe(19);
    expect(claimedKeyed).toEqual([]);
  });

  test("stop() with a head in flight: the key's next is left due now, unattempted, for any worker", async () => {
    const h = await harness({ http: { timeout: "60s" } });
    h.receiver.script("/hook", { status: 200, delayMs: 300 });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const [first, second] = await h.postel.outbound.sendBatch([
      { type: "a", data: 1, orderingKey: "k" },
      { type: "a", data: 2, orderingKey: "k" },
    ]);
    await h.postel.start();
    while (h.receiver.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // Stopped while the head's request is in flight: the next one is not started (nor kept leased).
    await h.postel.stop();
    const [next] = await h.postel.outbound.messages.deliveries(second!.id);
    expect(next).toMatchObject({ status: "pending", attemptsMade: 0, retriesUsed: 0 });
    expect((await h.postel.outbound.messages.deliveries(first!.id))[0]).toMatchObject({ attemptsMade: 1 });
    const due = await h.storage.claimDue({
      owner: "other",
      now: h.clock.now(),
      until: h.clock.now() + 60_000,
      limit: 10,
    });
    expect(due.map((c) => c.delivery.id)).toEqual([next!.id]);
  });
});

/** Counts the messages `recordFanout` is given (those not delivered straight from the outbox). */
function countFanouts(storage: Harness["storage"]): { readonly count: number } {
  const counter = { count: 0 };
  const recordFanout = storage.recordFanout.bind(storage);
  storage.recordFanout = async (results, now, lease) => {
    counter.count += results.length;
    return recordFanout(results, now, lease);
  };
  return counter;
}

describe("keyed messages straight from the outbox (ORDERING_RULES.directHead)", () => {
  test("a message whose key has nothing before it goes direct to its one endpoint: no fan-out write, its delivery keeps its key", async () => {
    const h = await harness({ http: { timeout: "10s" } });
    const fanouts = countFanouts(h.storage);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const sent = await h.postel.outbound.sendBatch(
      Array.from({ length: 10 }, (_, i) => ({ type: "a", data: { i }, orderingKey: `k${i}` })),
    );
    await h.postel.drain();
    expect(fanouts.count).toBe(0);
    expect(h.receiver.on("/hook")).toHaveLength(10);
    for (const { id } of sent) {
      const [delivery] = await h.postel.outbound.messages.deliveries(id);
      expect(delivery).toMatchObject({ status: "succeeded", orderingKey: expect.stringMatching(/^k\d$/) });
    }
    // Two of one key in one claim: the first is not alone, so both are fanned out, in order.
    await h.postel.outbound.sendBatch([
      { type: "a", data: { i: 10 }, orderingKey: "k0" },
      { type: "a", data: { i: 11 }, orderingKey: "k0" },
    ]);
    await h.postel.drain();
    expect(fanouts.count).toBe(2);
    const order = h.receiver
      .on("/hook")
      .map((r) => (JSON.parse(r.body.toString("utf8")) as { data: { i: number } }).data.i);
    expect(order.slice(10)).toEqual([10, 11]);
  });

  test("not when a request may outlast half a lease: a replay of its key waits out the lease it saw", async () => {
    const h = await harness({ http: { timeout: "40s" }, workers: { leaseDuration: "60s" } });
    const fanouts = countFanouts(h.storage);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    await h.postel.outbound.send({ type: "a", data: 1, orderingKey: "k" });
    await h.postel.drain();
    expect(fanouts.count).toBe(1);
    expect(h.receiver.on("/hook")).toHaveLength(1);
  });
});
