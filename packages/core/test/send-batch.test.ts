import { describe, expect, test, vi } from "vitest";
import { ManualClock } from "../src/clock.js";
import type { OutboundConfig } from "../src/config/resolved.js";

import { createIdGenerator } from "../src/ids.js";
import { SEND_BATCH_MAX_BYTES, SEND_BATCH_MAX_EVENTS, sendBatch } from "../src/outbound/send-batch.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { harness } from "./support/harness.js";
import { refusal } from "./support/refusal.js";

const good = (i: number) => ({ type: "order.created", data: { i } });

describe("sendBatch()", () => {
  test("enqueues every event and returns their ids in input order", async () => {
    const { postel } = await harness();
    const results = await postel.outbound.sendBatch([
      { type: "order.created", data: { id: 1 }, tenantId: "t1", ttl: "1h" },
      { type: "order.paid", data: [1, 2] },
      { type: "order.shipped", data: "x", idempotencyKey: "ship-1" },
    ]);
    expect(results.map((r) => r.reused)).toEqual([false, false, false]);
    const messages = await Promise.all(results.map((r) => postel.outbound.messages.get(r.id)));
    expect(messages.map((m) => [m?.type, m?.data, m?.tenantId, m?.idempotencyKey])).toEqual([
      ["order.created", { id: 1 }, "t1", null],
      ["order.paid", [1, 2], null, null],
      ["order.shipped", "x", null, "ship-1"],
    ]);
    expect(messages[0]!.expiresAt).toBe(messages[0]!.createdAt + 3_600_000);
    // Ids sort in input order, as ids of send() called in turn would.
    expect([...results.map((r) => r.id)].sort()).toEqual(results.map((r) => r.id));
  });

  test("idempotency keys mean what they mean for send() called per event in order", async () => {
    const { postel } = await harness();
    const earlier = await postel.outbound.send({ type: "a", data: 0, idempotencyKey: "k-stored" });
    const results = await postel.outbound.sendBatch([
      { type: "a", data: 1, idempotencyKey: "k-new" },
      { type: "a", data: 2, idempotencyKey: "k-stored" },
      { type: "a", data: 3, idempotencyKey: "k-new" },
    ]);
    expect(results[0]!.reused).toBe(false);
    expect(results[1]).toEqual({ id: earlier.id, reused: true });
    expect(results[2]).toEqual({ id: results[0]!.id, reused: true });
    expect((await postel.outbound.messages.get(results[0]!.id))?.data).toBe(1);
    expect((await postel.outbound.messages.list()).items).toHaveLength(2);
  });

  test.each([
    ["an invalid type", { type: "has space", data: 1 }, "INVALID_EVENT_TYPE", "events[3].type: "],
    ["undefined data", { type: "a", data: undefined }, "PAYLOAD_NOT_SERIALIZABLE", "events[3].data: "],
    [
      "data over the size limit",
      { type: "a", data: "x".repeat(300_000) },
      "PAYLOAD_TOO_LARGE",
      "events[3].data: ",
    ],
    ["a malformed ttl", { type: "a", data: 1, ttl: "5 minutes" }, "INVALID_DURATION", "events[3].ttl: "],
    [
      "an empty idempotency key",
      { type: "a", data: 1, idempotencyKey: "" },
      "INVALID_ARGUMENT",
      "events[3].idempotencyKey: ",
    ],
    [
      "a tenant id with NUL",
      { type: "a", data: 1, tenantId: "t\u0000" },
      "INVALID_ARGUMENT",
      "events[3].tenantId: ",
    ],
    ["an unknown field", { type: "a", data: 1, tenant: "t1" }, "INVALID_EVENT", "events[3]: "],
    ["null", null, "INVALID_EVENT", "events[3]: "],
  ])(
    "refuses %s at index 3 with send()'s code, naming the index, and writes none of the batch",
    async (_name, bad, code, prefix) => {
      const { postel } = await harness();
      const single = await refusal(postel.outbound.send(bad as never));
      const events = [good(0), good(1), good(2), bad, good(4)];
      const error = await refusal(postel.outbound.sendBatch(events as never));
      expect(error.code).toBe(code);
      expect(error.code).toBe(single.code);
      expect(error.message).toBe(`${prefix}${single.message}`);
      expect((await postel.outbound.messages.list()).items).toEqual([]);
    },
  );

  test("refuses a batch of more than 10,000 events with BATCH_TOO_LARGE and writes nothing", async () => {
    const { postel } = await harness();
    const events = Array.from({ length: SEND_BATCH_MAX_EVENTS + 1 }, (_, i) => good(i));
    const error = await refusal(postel.outbound.sendBatch(events));
    expect(error.code).toBe("BATCH_TOO_LARGE");
    expect(error.message).toContain("10000");
    expect((await postel.outbound.messages.list()).items).toEqual([]);
    expect(await postel.outbound.sendBatch(events.slice(1))).toHaveLength(SEND_BATCH_MAX_EVENTS);
  });

  test("refuses a batch whose data sums past 16 MiB with BATCH_TOO_LARGE and writes nothing", async () => {
    const { postel } = await harness();
    const blob = "x".repeat(250_000); // each event under maxPayloadBytes (256 KiB)
    const count = Math.ceil(SEND_BATCH_MAX_BYTES / 250_000);
    const events = Array.from({ length: count }, () => ({ type: "a", data: blob }));
    const error = await refusal(postel.outbound.sendBatch(events));
    expect(error.code).toBe("BATCH_TOO_LARGE");
    expect((await postel.outbound.messages.list()).items).toEqual([]);
    expect(await postel.outbound.sendBatch(events.slice(1))).toHaveLength(count - 1);
  });

  test("refuses something that is not an array with INVALID_ARGUMENT", async () => {
    const { postel } = await harness();
    const error = await refusal(postel.outbound.sendBatch(good(0) as never));
    expect(error.code).toBe("INVALID_ARGUMENT");
  });

  test("an empty array returns [] without touching storage", async () => {
    const storage = InMemoryStorage();
    const enqueueMany = vi.spyOn(storage.batchSend, "enqueueMany");
    const postel = Postel({ outbound: { storage } });
    expect(await postel.outbound.sendBatch([])).toEqual([]);
    expect(enqueueMany).not.toHaveBeenCalled();
  });

  test("with tx, the batch commits or rolls back with the caller's transaction", async () => {
    const { postel, storage } = await harness();
    await expect(
      storage.transaction(async (tx) => {
        await postel.outbound.sendBatch([good(1), good(2)], { tx });
        throw new Error("business write failed");
      }),
    ).rejects.toThrow("business write failed");
    expect((await postel.outbound.messages.list()).items).toEqual([]);
    const results = await storage.transaction((tx) => postel.outbound.sendBatch([good(3), good(4)], { tx }));
    expect((await postel.outbound.messages.list()).items).toHaveLength(2);
    expect(results.every((r) => !r.reused)).toBe(true);
  });

  test("wakes the workers once per batch, and not when every event was reused", async () => {
    const storage = InMemoryStorage();
    const clock = new ManualClock();
    const wake = vi.fn();
    const deps = {
      config: { storage, maxPayloadBytes: 262_144 } as unknown as OutboundConfig,
      clock,
      newId: createIdGenerator(clock),
      wake,
      telemetry: null,
    };
    const events = Array.from({ length: 100 }, (_, i) => ({ type: "a", data: i, idempotencyKey: `k${i}` }));
    await sendBatch(deps, events);
    expect(wake).toHaveBeenCalledTimes(1);
    await sendBatch(deps, events);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  test("a storage without the batchSend capability gets BATCH_SEND_UNSUPPORTED, and send() still works", async () => {
    const { batchSend: _, ...older } = InMemoryStorage();
    const postel = Postel({ outbound: { storage: older as never } });
    const error = await refusal(postel.outbound.sendBatch([good(1)]));
    expect(error.code).toBe("BATCH_SEND_UNSUPPORTED");
    expect(error.message).toContain("sendBatch() needs the storage's batchSend capability");
    expect(await postel.outbound.send(good(2))).toMatchObject({ reused: false });
  });
});
