import { describe, expect, test } from "vitest";
import { ConfigurationError, InvalidInputError } from "../src/errors.js";
import type { PostelEventMap } from "../src/engine/events.js";
import type { PruneResult } from "../src/outbound/prune.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { type Harness, harness } from "./support/harness.js";

/** Sends `count` messages to one endpoint and delivers them now; returns their ids. */
async function deliveredMessages(h: Harness, count: number): Promise<string[]> {
  await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await h.postel.outbound.send({ type: "a", data: i })).id);
  await h.postel.drain();
  for (const id of ids) expect((await h.postel.outbound.messages.get(id))?.status).toBe("dispatched");
  return ids;
}

function configError(retention: unknown): ConfigurationError {
  try {
    Postel({ outbound: { storage: InMemoryStorage(), retention } as never });
  } catch (error) {
    if (error instanceof ConfigurationError) return error;
    throw error;
  }
  throw new Error("Postel() accepted the retention options");
}

describe("retention options", () => {
  test("list every bad field with its fix", () => {
    const error = configError({ maxAge: "30 days", batchSize: 0, interval: "10ms", every: "1h" });
    expect(error.issues.map((issue) => issue.path).sort()).toEqual([
      "outbound.retention.batchSize",
      "outbound.retention.every",
      "outbound.retention.interval",
      "outbound.retention.maxAge",
    ]);
    expect(error.message).toMatch(/maxAge: must be a duration/);
    expect(error.message).toMatch(/batchSize: must be a whole number of messages per batch, from 1 to 10000/);
    expect(error.message).toMatch(/interval: must be at least "1s"/);
  });

  test("a missing maxAge says what it means and how to keep history forever", () => {
    expect(configError({ batchSize: 100 }).message).toMatch(
      /outbound\.retention\.maxAge: is required: how long finished history is kept, e\.g\. "30d" \(leave `retention` out/,
    );
  });

  test("a maxAge under a minute is refused", () => {
    expect(configError({ maxAge: "30s" }).message).toMatch(/maxAge: must be at least "1m"/);
    expect(configError([]).message).toMatch(/retention: retention must be an object/);
  });

  test("a retention capability without pruneHealth() is refused at Postel(), naming the verb", () => {
    const memory = InMemoryStorage();
    const storage = { ...memory, retention: { pruneFinished: memory.retention.pruneFinished } };
    expect(() => Postel({ outbound: { storage: storage as never } })).toThrow(
      /outbound\.storage\.retention\.pruneHealth: missing: a retention capability implements all of RetentionStore/,
    );
  });

  test("a storage without the retention capability is refused when retention is on, and prune() says which capability", async () => {
    const { retention: _, ...rest } = InMemoryStorage();
    const storage = rest as never;
    let error: unknown;
    try {
      Postel({ outbound: { storage, retention: { maxAge: "30d" } } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(
      /outbound\.retention: needs the storage's retention capability \(RetentionStore\) to delete history, and memory has none/,
    );
    const postel = Postel({ outbound: { storage } });
    await expect(postel.outbound.prune({ olderThan: "30d" })).rejects.toMatchObject({
      code: "RETENTION_UNSUPPORTED",
      capability: "retention",
      message: expect.stringMatching(/prune\(\) needs the storage's retention capability/),
    });
  });
});

describe("postel.outbound.prune()", () => {
  test("deletes finished messages older than olderThan with their deliveries and attempts, and keeps newer ones", async () => {
    const h = await harness();
    const old = await deliveredMessages(h, 3);
    h.clock.advance("2d");
    const recent = (await h.postel.outbound.send({ type: "a", data: "recent" })).id;
    await h.postel.drain();

    const result = await h.postel.outbound.prune({ olderThan: "1d", batchSize: 2 });
    // The three old attempts were counted in one health bucket: it goes too, the recent one stays.
    expect(result).toEqual({ messages: 3, deliveries: 3, attempts: 3, healthBuckets: 1, complete: true });
    for (const id of old) expect(await h.postel.outbound.messages.get(id)).toBeNull();
    expect((await h.postel.outbound.messages.get(recent))?.status).toBe("dispatched");
    const [endpoint] = (await h.postel.outbound.endpoints.list()).items;
    expect(await h.storage.endpointHealth(endpoint!.id, 0)).toEqual({ attempts: 1, failures: 0 });
    expect(await h.postel.outbound.prune({ olderThan: "1d" })).toEqual({
      messages: 0,
      deliveries: 0,
      attempts: 0,
      healthBuckets: 0,
      complete: true,
    });
  });

  test("dryRun counts what a prune would delete, deletes nothing, and the prune then deletes exactly that", async () => {
    const h = await harness();
    const old = await deliveredMessages(h, 3);
    // An old message still waiting for a retry is kept by both.
    h.receiver.script("/retry", 500);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/retry"), types: ["retry.*"] });
    const waiting = (await h.postel.outbound.send({ type: "retry.me", data: 0 })).id;
    await h.postel.drain();
    h.clock.advance("2d");
    const progress: PruneResult[] = [];
    const dry = await h.postel.outbound.prune({
      olderThan: "1d",
      batchSize: 2,
      dryRun: true,
      onProgress: (p) => progress.push(p),
    });
    expect(dry).toEqual({ messages: 3, deliveries: 3, attempts: 3, healthBuckets: 0, complete: true });
    expect(progress.at(-1)).toEqual(dry);
    for (const id of [...old, waiting]) expect(await h.postel.outbound.messages.get(id)).not.toBeNull();
    const pruned = await h.postel.outbound.prune({ olderThan: "1d" });
    expect(pruned).toMatchObject({ messages: 3, deliveries: 3, attempts: 3 });
    expect(await h.postel.outbound.messages.get(waiting)).not.toBeNull();
    await expect(h.postel.outbound.prune({ olderThan: "1d", dryRun: "yes" as never })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  test("takes its age from retention.maxAge and stops early at maxBatches", async () => {
    const h = await harness({ retention: { maxAge: "1h", batchSize: 2 } });
    await deliveredMessages(h, 5);
    h.clock.advance("2h");
    const first = await h.postel.outbound.prune({ maxBatches: 1 });
    expect(first).toEqual({ messages: 2, deliveries: 2, attempts: 2, healthBuckets: 0, complete: false });
    // Message batches of 2 and 1 (the range ends), then the health bucket in a batch of its own.
    expect(await h.postel.outbound.prune({ maxBatches: 2 })).toMatchObject({
      messages: 3,
      healthBuckets: 0,
      complete: false,
    });
    expect(await h.postel.outbound.prune()).toEqual({
      messages: 0,
      deliveries: 0,
      attempts: 0,
      healthBuckets: 1,
      complete: true,
    });
  });

  test("reports the running totals after every batch, the last one complete", async () => {
    const h = await harness();
    await deliveredMessages(h, 3);
    h.clock.advance("2d");
    const progress: PruneResult[] = [];
    const result = await h.postel.outbound.prune({
      olderThan: "1d",
      batchSize: 2,
      onProgress: (p) => progress.push(p),
    });
    const totals = (messages: number, healthBuckets: number, complete: boolean) => ({
      messages,
      deliveries: messages,
      attempts: messages,
      healthBuckets,
      complete,
    });
    // Message batches of 2 and 1, then the one health bucket (a short batch: the end).
    expect(progress).toEqual([totals(2, 0, false), totals(3, 0, false), totals(3, 1, true)]);
    expect(result).toEqual(progress.at(-1));
    await expect(
      h.postel.outbound.prune({ olderThan: "1d", onProgress: "log" as never }),
    ).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  test("stops between batches once its signal aborts", async () => {
    const h = await harness();
    await deliveredMessages(h, 4);
    h.clock.advance("2d");
    const controller = new AbortController();
    const pruneFinished = h.storage.retention!.pruneFinished;
    h.storage.retention!.pruneFinished = async (request) => {
      controller.abort();
      return pruneFinished(request);
    };
    const result = await h.postel.outbound.prune({
      olderThan: "1d",
      batchSize: 1,
      signal: controller.signal,
    });
    expect(result).toEqual({ messages: 1, deliveries: 1, attempts: 1, healthBuckets: 0, complete: false });
  });

  test("without an age, throws RETENTION_NOT_CONFIGURED naming both fixes, and deletes nothing", async () => {
    const h = await harness();
    const [id] = await deliveredMessages(h, 1);
    h.clock.advance("365d");
    const error = await h.postel.outbound.prune().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: "RETENTION_NOT_CONFIGURED" });
    expect((error as Error).message).toMatch(
      /prune\(\{ olderThan: "30d" \}\).*retention: \{ maxAge: "30d" \}/,
    );
    expect(await h.postel.outbound.messages.get(id!)).not.toBeNull();
  });

  test("refuses bad options before deleting anything", async () => {
    const h = await harness();
    const [id] = await deliveredMessages(h, 1);
    h.clock.advance("365d");
    await expect(h.postel.outbound.prune({ olderThan: "a year" as never })).rejects.toMatchObject({
      code: "INVALID_DURATION",
    });
    const bad = await h.postel.outbound
      .prune({ olderThan: "1d", batchSize: 0, maxBatches: 1.5, signal: "stop" as never, age: 1 } as never)
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "INVALID_ARGUMENT" });
    const message = (bad as Error).message;
    for (const field of ["batchSize", "maxBatches", "signal", "age: unknown option"])
      expect(message).toContain(field);
    expect(await h.postel.outbound.messages.get(id!)).not.toBeNull();
  });
});

describe("the workers' retention", () => {
  test("runs a pass every interval after start() and deletes what has aged out since", async () => {
    const h = await harness({
      retention: { maxAge: "1h", interval: "10m", batchSize: 2 },
      workers: { pollInterval: "1h", concurrency: 4 },
    });
    const passes: PostelEventMap["pruned"][] = [];
    h.postel.on("pruned", (pass) => passes.push(pass));
    const first = await deliveredMessages(h, 3);
    h.clock.advance("1h");
    const second = (await h.postel.outbound.send({ type: "a", data: "later" })).id;
    await h.postel.drain();
    expect(passes).toHaveLength(0); // drain() never prunes

    await h.postel.start();
    await h.clock.advanceAsync("750s"); // the first pass runs 7m30s to 12m30s after start
    expect(passes).toHaveLength(1);
    expect(passes[0]).toMatchObject({ messages: 3, deliveries: 3, attempts: 3, complete: true });
    for (const id of first) expect(await h.postel.outbound.messages.get(id)).toBeNull();
    expect(await h.postel.outbound.messages.get(second)).not.toBeNull();

    await h.clock.advanceAsync("1h");
    expect(passes.length).toBeGreaterThanOrEqual(5); // every 10m ±25%
    expect(passes.reduce((sum, pass) => sum + pass.messages, 0)).toBe(4);
    expect(await h.postel.outbound.messages.get(second)).toBeNull();
  });

  test("a failing pass is reported as an error event and the next one runs on schedule", async () => {
    const h = await harness({ retention: { maxAge: "1h", interval: "1m" } });
    await deliveredMessages(h, 1);
    const errors: PostelEventMap["error"][] = [];
    const passes: PostelEventMap["pruned"][] = [];
    h.postel.on("error", (error) => errors.push(error));
    h.postel.on("pruned", (pass) => passes.push(pass));
    const pruneFinished = h.storage.retention!.pruneFinished;
    let failures = 1;
    h.storage.retention!.pruneFinished = async (request) => {
      if (failures-- > 0) throw new Error("database restarting");
      return pruneFinished(request);
    };
    h.clock.advance("2h");
    await h.postel.start();
    await h.clock.advanceAsync("3m");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ context: expect.stringContaining("retention") });
    expect(passes[0]).toMatchObject({ messages: 1 });
  });

  test("stop() cancels the next pass", async () => {
    const h = await harness({ retention: { maxAge: "1h", interval: "1m" } });
    const [id] = await deliveredMessages(h, 1);
    h.clock.advance("2h");
    await h.postel.start();
    await h.postel.stop();
    await h.clock.advanceAsync("10m");
    expect(await h.postel.outbound.messages.get(id!)).not.toBeNull();
  });
});
