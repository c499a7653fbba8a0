import { describe, expect, test } from "vitest";
import { ManualClock } from "../src/clock.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";

// Inputs the property suites found: each got a raw TypeError, a wrong code, or was stored.

async function setUp() {
  const storage = InMemoryStorage();
  const postel = Postel({
    clock: new ManualClock(),
    outbound: { storage, http: { allowPrivateNetworks: true } },
  });
  const endpoint = await postel.outbound.endpoints.create({ url: "http://127.0.0.1:9/hook" });
  return { postel, storage, endpoint };
}

const coded = (code: string) => expect.objectContaining({ code });

describe("bad input the property suites found", () => {
  test("a BigInt event type or ttl gets its coded error, not a TypeError from building the message", async () => {
    const { postel } = await setUp();
    await expect(postel.outbound.send({ type: 1n as never, data: 1 })).rejects.toThrow(
      coded("INVALID_EVENT_TYPE"),
    );
    await expect(postel.outbound.send({ type: "a", data: 1, ttl: 5n as never })).rejects.toThrow(
      coded("INVALID_DURATION"),
    );
  });

  test("ids that cannot name a row (a BigInt, text with NUL or a lone surrogate) are not found, unasked", async () => {
    // PostgreSQL refuses NUL in a parameter with a raw driver error, so such ids never reach storage.
    const memory = InMemoryStorage();
    const asked: unknown[] = [];
    const storage = {
      ...memory,
      getEndpoint(id: string) {
        asked.push(id);
        return memory.getEndpoint(id);
      },
      getMessage(id: string) {
        asked.push(id);
        return memory.getMessage(id);
      },
    };
    const postel = Postel({ clock: new ManualClock(), outbound: { storage } });
    for (const id of [1n, "ep_1\u0000", "ep_1\ud800"]) {
      await expect(postel.outbound.endpoints.update(id as never, { description: "x" })).rejects.toThrow(
        coded("ENDPOINT_NOT_FOUND"),
      );
      expect(await postel.outbound.endpoints.get(id as never)).toBeNull();
      await expect(postel.outbound.messages.deliveries(id as never)).rejects.toThrow(
        coded("MESSAGE_NOT_FOUND"),
      );
      await expect(postel.outbound.replay({ messageId: id as never })).rejects.toThrow(
        coded("MESSAGE_NOT_FOUND"),
      );
      await expect(postel.outbound.replay({ endpointId: id as never, since: 0 })).rejects.toThrow(
        coded("ENDPOINT_NOT_FOUND"),
      );
    }
    expect(asked).toEqual([]);
  });

  test("arrays where an object belongs are refused and nothing is written", async () => {
    const { postel, storage, endpoint } = await setUp();
    const revision = await storage.endpointsRevision();
    for (const fields of [{ headers: ["a"] }, { headers: [] }, { autoDisable: [] }, { circuitBreaker: [] }]) {
      await expect(
        postel.outbound.endpoints.create({ url: "http://127.0.0.1:9/x", ...(fields as object) }),
      ).rejects.toThrow(coded("INVALID_ENDPOINT"));
      await expect(postel.outbound.endpoints.update(endpoint.id, fields as never)).rejects.toThrow(
        coded("INVALID_ENDPOINT"),
      );
    }
    await expect(postel.outbound.endpoints.update(endpoint.id, [] as never)).rejects.toThrow(
      coded("INVALID_ENDPOINT"),
    );
    expect(await storage.endpointsRevision()).toBe(revision);
    expect(await storage.allEndpoints()).toHaveLength(1);
  });

  test("create({ url: undefined }) says the url is required, like a missing url", async () => {
    const { postel } = await setUp();
    await expect(postel.outbound.endpoints.create({ url: undefined as never })).rejects.toThrow(
      expect.objectContaining({
        code: "INVALID_ENDPOINT",
        message: expect.stringContaining("url: is required"),
      }),
    );
  });
});
