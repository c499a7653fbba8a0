import { describe, expect, test } from "vitest";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { harness } from "./support/harness.js";
import { startReceiver } from "./support/receiver.js";

describe("leases", () => {
  test("a crashed worker's lease expires and another worker delivers the work", async () => {
    const h = await harness({ workers: { leaseDuration: "60s" } });
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    // Simulate another worker that fanned out and claimed the delivery, then died.
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    const now = h.clock.now();
    const [claimed] = await h.storage.claimFanout({ owner: "crashed", now, until: now + 60_000, limit: 10 });
    await h.storage.recordFanout(
      [
        {
          messageId: id,
          token: claimed!.token,
          deliveries: [
            { id: "dlv_1", messageId: id, endpointId: endpoint.id, webhookId: id, createdAt: now },
          ],
        },
      ],
      now,
      { owner: "crashed", until: now + 60_000 },
    );
    await h.postel.drain();
    expect(h.receiver.requests).toHaveLength(0);
    h.clock.advance("60s");
    await h.postel.drain();
    expect(h.receiver.requests).toHaveLength(1);
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("dispatched");
  });

  test("an outcome from a worker whose lease was lost is refused", async () => {
    const h = await harness();
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    const now = h.clock.now();
    const [message] = await h.storage.claimFanout({ owner: "slow", now, until: now + 1_000, limit: 1 });
    const [stale] = await h.storage.recordFanout(
      [
        {
          messageId: id,
          token: message!.token,
          deliveries: [
            { id: "dlv_1", messageId: id, endpointId: endpoint.id, webhookId: id, createdAt: now },
          ],
        },
      ],
      now,
      { owner: "slow", until: now + 1_000 },
    );
    h.clock.advance("2s");
    await h.postel.drain(); // another worker takes the expired lease and delivers
    const result = await h.storage.recordOutcomes(
      [{ deliveryId: "dlv_1", leaseToken: stale!.leaseToken, transition: { kind: "failed" } }],
      h.clock.now(),
    );
    expect(result.leaseLost).toEqual(["dlv_1"]);
    expect((await h.postel.outbound.messages.deliveries(id))[0]?.status).toBe("succeeded");
  });
});

describe("drain()", () => {
  test("stops after maxMessages and reports what it did", async () => {
    const h = await harness({ workers: { batchSize: 2 } });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    for (let i = 0; i < 5; i++) await h.postel.outbound.send({ type: "a", data: i });
    const first = await h.postel.drain({ maxMessages: 4 });
    expect(h.receiver.requests.length).toBeLessThan(5);
    expect(first.succeeded).toBe(h.receiver.requests.length);
    const rest = await h.postel.drain();
    expect(first.succeeded + rest.succeeded).toBe(5);
  });
});

describe("start() and stop()", () => {
  test("workers on the real clock deliver a message sent after start, woken without waiting for the poll", async () => {
    const receiver = await startReceiver();
    const postel = Postel({
      outbound: {
        storage: InMemoryStorage(),
        http: { allowPrivateNetworks: true },
        workers: { pollInterval: "1h" },
      },
    });
    try {
      await postel.outbound.endpoints.create({ url: receiver.url("/hook") });
      await postel.start();
      const delivered = new Promise((resolve) => postel.on("delivered", resolve));
      await postel.outbound.send({ type: "a", data: 1 });
      await delivered;
      expect(receiver.requests).toHaveLength(1);
      await postel.stop();
      await postel.outbound.send({ type: "a", data: 2 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(receiver.requests).toHaveLength(1);
    } finally {
      await postel.close();
      await receiver.close();
    }
  });

  test("stop() waits for in-flight deliveries to be recorded", async () => {
    const receiver = await startReceiver();
    const postel = Postel({ outbound: { storage: InMemoryStorage(), http: { allowPrivateNetworks: true } } });
    try {
      receiver.script("/slow", "hang");
      await postel.outbound.endpoints.create({ url: receiver.url("/slow") });
      const attempted = new Promise((resolve) => postel.on("attempt", resolve));
      const { id } = await postel.outbound.send({ type: "a", data: 1 });
      await postel.start();
      while (receiver.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const stopped = postel.stop().then(() => "stopped");
      // The request is still hanging: stop() must not resolve before its outcome is recorded.
      const early = await Promise.race([
        stopped,
        new Promise((resolve) => setTimeout(() => resolve("waiting"), 100)),
      ]);
      expect(early).toBe("waiting");
      await receiver.close(); // the receiver goes away: the attempt fails and is recorded
      expect(await stopped).toBe("stopped");
      await attempted;
      expect(await postel.outbound.messages.attempts(id)).toHaveLength(1);
    } finally {
      await postel.close();
    }
  });

  test("a hanging endpoint does not hold up others: deliveries flow independently of their batch", async () => {
    const receiver = await startReceiver();
    receiver.script("/slow", "hang");
    const postel = Postel({
      outbound: {
        storage: InMemoryStorage(),
        http: { allowPrivateNetworks: true, timeout: "5s" },
        workers: { concurrency: 4, batchSize: 4, pollInterval: "20ms" },
      },
    });
    try {
      await postel.outbound.endpoints.create({ url: receiver.url("/slow"), types: ["slow"] });
      await postel.outbound.endpoints.create({ url: receiver.url("/fast"), types: ["fast"] });
      await postel.outbound.send({ type: "slow", data: 1 });
      await postel.outbound.send({ type: "slow", data: 2 });
      for (let i = 0; i < 10; i++) await postel.outbound.send({ type: "fast", data: i });
      let delivered = 0;
      const allFast = new Promise<void>((resolve) =>
        postel.on("delivered", () => {
          if (++delivered === 10) resolve();
        }),
      );
      const started = performance.now();
      await postel.start();
      await allFast;
      // The two slow requests are still hanging (5 s timeout), yet every fast one is through.
      expect(performance.now() - started).toBeLessThan(4_000);
      expect(receiver.on("/slow")).toHaveLength(2);
      expect(receiver.on("/fast")).toHaveLength(10);
    } finally {
      await receiver.close();
      await postel.close();
    }
  });

  test("outcomes are group-committed: far fewer recordOutcomes calls than deliveries", async () => {
    // A manual clock never fires the 10 ms linger, so commits happen only when a batch is full or
    // nothing is in flight: the count depends on the pipeline, not on how busy the machine is.
    const h = await harness();
    let calls = 0;
    const recordOutcomes = h.storage.recordOutcomes.bind(h.storage);
    h.storage.recordOutcomes = (outcomes, now) => {
      calls++;
      return recordOutcomes(outcomes, now);
    };
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    for (let i = 0; i < 300; i++) await h.postel.outbound.send({ type: "a", data: i });
    let delivered = 0;
    const all = new Promise<void>((resolve) =>
      h.postel.on("delivered", () => {
        if (++delivered === 300) resolve();
      }),
    );
    await h.postel.start();
    await all;
    // 300 outcomes in batches of 64 is 5 commits; a few more when the pool momentarily runs dry.
    expect(calls).toBeGreaterThanOrEqual(5);
    expect(calls).toBeLessThanOrEqual(12);
  });
});
