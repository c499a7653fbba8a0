import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, test } from "vitest";
import { LinearBackoff } from "../src/backoff.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { harness } from "./support/harness.js";
import { startReceiver } from "./support/receiver.js";

// The work a crashed worker leased (for 60 s) is not sent while the lease stands, then is sent once.
async function expectDeliveredOnceLeaseExpires(h: Awaited<ReturnType<typeof harness>>, id: string) {
  await h.postel.drain();
  expect(h.receiver.requests).toHaveLength(0);
  h.clock.advance("60s");
  await h.postel.drain();
  expect(h.receiver.requests).toHaveLength(1);
  expect((await h.postel.outbound.messages.get(id))?.status).toBe("dispatched");
}

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
    await expectDeliveredOnceLeaseExpires(h, id);
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

describe("direct deliveries (a message that matches exactly one endpoint)", () => {
  test("are delivered without recording a fan-out first: the delivery row is written once, with its outcome", async () => {
    const h = await harness();
    let fanoutWrites = 0;
    const recordFanout = h.storage.recordFanout.bind(h.storage);
    h.storage.recordFanout = (results, now, lease) => {
      fanoutWrites++;
      return recordFanout(results, now, lease);
    };
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    const summary = await h.postel.drain();
    expect(summary.succeeded).toBe(1);
    expect(fanoutWrites).toBe(0);
    expect(h.receiver.requests).toHaveLength(1);
    const [delivery] = await h.postel.outbound.messages.deliveries(id);
    expect(delivery).toMatchObject({ status: "succeeded", attemptsMade: 1 });
    expect(h.receiver.requests[0]!.headers["webhook-id"]).toBe(id);
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("dispatched");
  });

  test("a worker that dies mid-delivery loses nothing: the message is delivered after its fan-out lease expires", async () => {
    const h = await harness({ workers: { leaseDuration: "60s" } });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    const now = h.clock.now();
    // Another worker leased the message for a direct delivery, then died before recording anything.
    await h.storage.claimFanout({ owner: "crashed", now, until: now + 60_000, limit: 10 });
    await expectDeliveredOnceLeaseExpires(h, id);
  });

  test("a slow request keeps its lease: fan-out leases of direct deliveries and delivery leases are renewed every half lease", async () => {
    const h = await harness({ workers: { leaseDuration: "60s" }, http: { timeout: "30s" } });
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const arrived: string[] = [];
    const server = createServer((req, res) => {
      arrived.push(req.url ?? "");
      void released.then(() => res.end("ok"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
    try {
      await h.postel.outbound.endpoints.create({ url: url("/one"), types: ["one"] });
      await h.postel.outbound.endpoints.create({ url: url("/two-a"), types: ["two"] });
      await h.postel.outbound.endpoints.create({ url: url("/two-b"), types: ["two"] });
      await h.postel.outbound.send({ type: "one", data: 1 }); // direct
      await h.postel.outbound.send({ type: "two", data: 2 }); // fanned out to two deliveries
      const renewed = { fanout: 0, deliveries: 0 };
      const renewFanoutLeases = h.storage.direct!.renewFanoutLeases.bind(h.storage.direct);
      h.storage.direct!.renewFanoutLeases = (leases, until) => {
        renewed.fanout += leases.length;
        return renewFanoutLeases(leases, until);
      };
      const renewLeases = h.storage.renewLeases.bind(h.storage);
      h.storage.renewLeases = (leases, until) => {
        renewed.deliveries += leases.length;
        return renewLeases(leases, until);
      };
      const drained = h.postel.drain();
      while (arrived.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      await h.clock.advanceAsync("31s"); // past half a lease: renewed
      await h.clock.advanceAsync("30s"); // past the original expiry: renewed again
      expect(renewed).toEqual({ fanout: 2, deliveries: 4 });
      const now = h.clock.now();
      expect(await h.storage.claimFanout({ owner: "other", now, until: now + 60_000, limit: 10 })).toEqual(
        [],
      );
      expect(await h.storage.claimDue({ owner: "other", now, until: now + 60_000, limit: 10 })).toEqual([]);
      release();
      const summary = await drained;
      expect(summary.succeeded).toBe(3);
      expect(summary.leaseLost).toBe(0);
      expect(arrived.sort()).toEqual(["/one", "/two-a", "/two-b"]);
    } finally {
      release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
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
    // nothing is in flight: the count depends on the pipeline, not on how busy the machine is. A
    // request that timed out on a loaded machine would wait for a retry this clock never reaches.
    const h = await harness({ http: { timeout: "60s" } });
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

describe("a message sent straight from the outbox", () => {
  test("starts before the fan-out of the messages claimed with it is written", async () => {
    const h = await harness({ http: { timeout: "10s" } });
    // Fan-out writes wait until the test opens the gate.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const recordFanout = h.storage.recordFanout.bind(h.storage);
    h.storage.recordFanout = async (results, now, lease) => {
      await gate;
      return recordFanout(results, now, lease);
    };
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/one"), types: ["one", "both"] });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/two"), types: ["both"] });
    // One claim: a message to two endpoints (fanned out first) and one to a single endpoint (direct).
    await h.postel.outbound.sendBatch([
      { type: "both", data: 1 },
      { type: "one", data: 2 },
    ]);
    const requests = async (count: number) => {
      const deadline = Date.now() + 10_000;
      while (h.receiver.requests.length < count) {
        if (Date.now() > deadline)
          throw new Error(`only ${h.receiver.requests.length} of ${count} requests arrived`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await h.postel.start();
    try {
      await requests(1);
      // The direct one arrived while the fan-out was still held at the gate.
      expect(h.receiver.requests.map((r) => r.path)).toEqual(["/one"]);
    } finally {
      open();
    }
    await requests(3);
    expect(h.receiver.requests.map((r) => r.path).sort()).toEqual(["/one", "/one", "/two"]);
  });
});

describe("a message sent while a claim only turns a key's backlog into waiting rows", () => {
  test("is claimed beside that claim, not after it (expedite)", async () => {
    // Small batches: each claim fans out a few of the hot key's messages, all but its head waiting.
    const h = await harness({ workers: { batchSize: 4 }, http: { timeout: "10s" } });
    // The third keyed fan-out write (by then fan-out has started next to nothing) waits at a gate.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let held!: () => void;
    const holding = new Promise<void>((resolve) => {
      held = resolve;
    });
    let writes = 0;
    const recordFanout = h.storage.recordFanout.bind(h.storage);
    h.storage.recordFanout = async (results, now, lease) => {
      if (++writes >= 3) {
        held();
        await gate;
      }
      return recordFanout(results, now, lease);
    };
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hot"), types: ["hot"] });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/quiet"), types: ["quiet"] });
    for (let i = 0; i < 40; i++) {
      await h.postel.outbound.send({ type: "hot", data: i, orderingKey: "hot" });
    }
    // The backlog is older than what a claim from the newest end takes (the last second).
    h.clock.advance("2s");
    await h.postel.start();
    try {
      await holding;
      await h.postel.outbound.send({ type: "quiet", data: "now", orderingKey: "quiet" });
      const deadline = Date.now() + 10_000;
      while (!h.receiver.requests.some((r) => r.path === "/quiet")) {
        if (Date.now() > deadline) throw new Error("the quiet message waited for the held fan-out");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // Straight from the outbox: the express claim wrote no fan-out, and took none of the backlog.
      expect(writes).toBe(3);
    } finally {
      open();
    }
    const deadline = Date.now() + 10_000;
    while (h.receiver.requests.filter((r) => r.path === "/hot").length < 40) {
      if (Date.now() > deadline) throw new Error("the hot key did not drain");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const hot = h.receiver.requests
      .filter((r) => r.path === "/hot")
      .map((r) => JSON.parse(String(r.body)).data);
    expect(hot).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });
});

describe("looking for due work", () => {
  test("a busy worker beside a failing endpoint looks for due retries when they fall due, not at every claim", async () => {
    // An hour between polls: only what the worker knows of its own retries can make it look for them.
    const h = await harness({
      workers: { batchSize: 8, pollInterval: "1h" },
      retryPolicy: LinearBackoff({ maxAttempts: 5, step: "10s" }),
      circuitBreaker: false,
      autoDisable: false,
    });
    h.receiver.script("/down", 500);
    let looks = 0;
    let claims = 0;
    const claimDue = h.storage.claimDue.bind(h.storage);
    h.storage.claimDue = (lease) => {
      looks++;
      return claimDue(lease);
    };
    const claimFanout = h.storage.claimFanout.bind(h.storage);
    h.storage.claimFanout = (lease) => {
      claims++;
      return claimFanout(lease);
    };
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/ok") });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/down") });
    // 20 keys × 5 messages, each to both endpoints: behind each failing head, its key's others wait,
    // so no fan-out starts all it creates (every claim used to look for due work after it).
    for (let i = 0; i < 100; i++) {
      await h.postel.outbound.send({ type: "a", data: i, orderingKey: `k${i % 20}` });
    }
    // Older than what a claim takes from the newest end: a later message of a key taken before its
    // earlier ones is refused for a second, which a manual clock never lets pass.
    h.clock.advance("2s");
    const until = async (what: string, done: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await h.postel.start();
    await until("the healthy endpoint's 100", () => h.receiver.on("/ok").length === 100);
    await until("the 20 heads' first attempts", () => h.receiver.on("/down").length === 20);
    expect(claims).toBeGreaterThanOrEqual(10);
    // The first claim looks; then nothing this worker recorded is due until its retries are.
    expect(looks).toBeLessThanOrEqual(2);
    // Their time comes: the idle worker wakes for them (not at its hourly poll) and finds them.
    h.clock.advance("10s");
    await until("the heads' retries", () => h.receiver.on("/down").length === 40);
    expect(looks).toBeGreaterThan(2);
  });
});
