import { describe, expect, test } from "vitest";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { harness } from "./support/harness.js";

describe("endpoints", () => {
  test("create generates a whsec_ secret, stores defaults, and get/list read it back", async () => {
    const h = await harness();
    const endpoint = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/hook"),
      metadata: { team: "billing" },
    });
    expect(endpoint).toMatchObject({
      state: "active",
      types: ["*"],
      metadata: { team: "billing" },
      circuitOpenUntil: null,
    });
    expect(endpoint).not.toHaveProperty("secrets");
    expect(await h.postel.outbound.endpoints.secret(endpoint.id)).toMatch(/^whsec_/);
    expect(await h.postel.outbound.endpoints.get(endpoint.id)).toEqual(endpoint);
    expect((await h.postel.outbound.endpoints.list()).items).toEqual([endpoint]);
  });

  test("signing.algorithm v1a generates Ed25519 keys", async () => {
    const h = await harness({ signing: { algorithm: "v1a" } });
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    expect(await h.postel.outbound.endpoints.secret(endpoint.id)).toMatch(/^whsk_/);
    await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect(String(h.receiver.requests[0]?.headers["webhook-signature"])).toMatch(/^v1a,/);
  });

  test("update changes only the given fields; null resets an override", async () => {
    const h = await harness();
    const endpoint = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/a"),
      types: ["order.*"],
      circuitBreaker: { threshold: 0.3 },
    });
    h.clock.advance("1s");
    const updated = await h.postel.outbound.endpoints.update(endpoint.id, {
      url: h.receiver.url("/b"),
      circuitBreaker: null,
    });
    expect(updated).toMatchObject({ url: h.receiver.url("/b"), types: ["order.*"], circuitBreaker: null });
    expect(updated.updatedAt).toBe(h.clock.now());
  });

  test("maxInFlight and rateLimit are stored with the endpoint; update changes only those given; null clears", async () => {
    const h = await harness();
    const { endpoints } = h.postel.outbound;
    const created = await endpoints.create({ url: h.receiver.url("/a"), maxInFlight: 4, rateLimit: 0.5 });
    expect(created).toMatchObject({ maxInFlight: 4, rateLimit: 0.5 });
    expect(await endpoints.get(created.id)).toEqual(created);
    const plain = await endpoints.create({ url: h.receiver.url("/b") });
    expect(plain).toMatchObject({ maxInFlight: null, rateLimit: null });

    h.clock.advance("1s");
    expect(await endpoints.update(created.id, { rateLimit: 250 })).toMatchObject({
      maxInFlight: 4,
      rateLimit: 250,
    });
    h.clock.advance("1s");
    const cleared = await endpoints.update(created.id, { maxInFlight: null });
    expect(cleared).toMatchObject({ maxInFlight: null, rateLimit: 250, updatedAt: h.clock.now() });
    expect((await endpoints.list()).items).toEqual([cleared, plain]);
  });

  test.each([
    [
      { maxInFlight: 0 },
      "maxInFlight: must be a whole number of requests in flight at once, from 1 to 10000",
    ],
    [{ maxInFlight: 10_001 }, "from 1 to 10000"],
    [{ maxInFlight: 1.5 }, "whole number"],
    [{ rateLimit: 0.001 }, "rateLimit: must be a number of requests per second from 0.01 to 100000"],
    [{ rateLimit: 100_001 }, "from 0.01 to 100000"],
    [{ rateLimit: Number.POSITIVE_INFINITY }, "from 0.01 to 100000"],
    [{ rateLimit: "10/s" }, "requests per second"],
  ])("refuses %o with INVALID_ENDPOINT naming the range, and writes nothing", async (limits, expected) => {
    const h = await harness();
    const { endpoints } = h.postel.outbound;
    await expect(endpoints.create({ url: h.receiver.url(), ...(limits as object) })).rejects.toMatchObject({
      code: "INVALID_ENDPOINT",
      message: expect.stringContaining(expected),
    });
    expect(await h.storage.allEndpoints()).toEqual([]);
    const endpoint = await endpoints.create({ url: h.receiver.url(), maxInFlight: 2, rateLimit: 1 });
    await expect(endpoints.update(endpoint.id, limits as object)).rejects.toMatchObject({
      code: "INVALID_ENDPOINT",
      message: expect.stringContaining("use null for the default in outbound.limits"),
    });
    expect(await endpoints.get(endpoint.id)).toEqual(endpoint);
  });

  test("delete cancels pending deliveries and keeps the history", async () => {
    const h = await harness();
    h.receiver.script("/hook", 500);
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    await h.postel.outbound.endpoints.delete(endpoint.id);
    expect(await h.postel.outbound.endpoints.get(endpoint.id)).toBeNull();
    expect((await h.postel.outbound.messages.deliveries(id))[0]?.status).toBe("cancelled");
    expect(await h.postel.outbound.messages.attempts(id)).toHaveLength(1);
  });

  test.each([
    [
      "update",
      (p: ReturnType<typeof Postel>) => p.outbound.endpoints.update("ep_missing", { description: "x" }),
    ],
    ["delete", (p: ReturnType<typeof Postel>) => p.outbound.endpoints.delete("ep_missing")],
    ["enable", (p: ReturnType<typeof Postel>) => p.outbound.endpoints.enable("ep_missing")],
    ["rotateSecret", (p: ReturnType<typeof Postel>) => p.outbound.endpoints.rotateSecret("ep_missing")],
    ["secret", (p: ReturnType<typeof Postel>) => p.outbound.endpoints.secret("ep_missing")],
    ["messages.attempts", (p: ReturnType<typeof Postel>) => p.outbound.messages.attempts("msg_missing")],
  ])("%s of an unknown id is a coded NotFound error", async (_name, call) => {
    const h = await harness();
    await expect(call(h.postel)).rejects.toMatchObject({
      code: expect.stringMatching(/^(ENDPOINT|MESSAGE)_NOT_FOUND$/),
    });
  });

  test.each([
    ["ftp://example.com/hook", "INVALID_URL"],
    ["not a url", "INVALID_URL"],
    ["https://user:pass@example.com/hook", "INVALID_URL"],
    ["http://127.0.0.1:9/hook", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://10.1.2.3/hook", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://169.254.169.254/latest/meta-data", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://localhost:3000/hook", "PRIVATE_ADDRESS_NOT_ALLOWED"],
  ])("refuses %s by default (%s) and writes nothing", async (url, code) => {
    const storage = InMemoryStorage();
    const postel = Postel({ outbound: { storage } });
    await expect(postel.outbound.endpoints.create({ url })).rejects.toMatchObject({ code });
    expect(await storage.allEndpoints()).toEqual([]);
    await postel.close();
  });

  test.each([
    ["description", { description: "a\u0000b" }, "description"],
    ["tenantId", { tenantId: "t\ud800" }, "tenantId"],
    ["a metadata value", { metadata: { owner: { name: "x\u0000" } } }, "metadata.owner.name"],
    ["a metadata key", { metadata: { "k\udfff": 1 } }, "metadata.k"],
    ["a filter value", { filter: { type: "a\u0000" } }, "filter.type"],
    ["a header name", { headers: { "x-\u0000": "v" } }, "headers.x-"],
  ])(
    "refuses NUL or a lone surrogate in %s with INVALID_ENDPOINT naming its path, and writes nothing",
    async (_, fields, path) => {
      const h = await harness();
      await expect(
        h.postel.outbound.endpoints.create({ url: h.receiver.url(), ...fields } as never),
      ).rejects.toMatchObject({ code: "INVALID_ENDPOINT", message: expect.stringContaining(path) });
      expect((await h.postel.outbound.endpoints.list()).items).toEqual([]);
    },
  );

  test.each([
    ["a 100 KB url", (url: string) => ({ url: `${url}?${"a".repeat(100_000)}` }), "url must be at most 2048"],
    [
      "10 MB of metadata",
      () => ({ metadata: { blob: "x".repeat(10_000_000) } }),
      "metadata must serialise to at most 16 KiB",
    ],
    [
      "100,000 type globs",
      () => ({ types: Array.from({ length: 100_000 }, (_, i) => `t.${i}`) }),
      "at most 100 types",
    ],
    [
      "a 20 KB filter",
      () => ({ filter: { type: "x".repeat(20_000) } }),
      "filter must serialise to at most 16 KiB",
    ],
    [
      "51 headers",
      () => ({ headers: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`x-h${i}`, "v"])) }),
      "at most 50 headers",
    ],
    [
      "a 5,000-character header value",
      () => ({ headers: { "x-big": "v".repeat(5_000) } }),
      "at most 4096 characters",
    ],
  ])("refuses %s with INVALID_ENDPOINT saying the bound, and writes nothing", async (_, fields, says) => {
    const h = await harness();
    const base = h.receiver.url();
    await expect(
      h.postel.outbound.endpoints.create({ url: base, ...fields(base) } as never),
    ).rejects.toMatchObject({ code: "INVALID_ENDPOINT", message: expect.stringContaining(says) });
    expect((await h.postel.outbound.endpoints.list()).items).toEqual([]);
  });

  test("accepts an endpoint at every bound", async () => {
    const h = await harness();
    const endpoint = await h.postel.outbound.endpoints.create({
      url: h.receiver.url(),
      types: Array.from({ length: 100 }, (_, i) => `t.${i}`),
      headers: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`x-h${i}`, "v".repeat(4_096)])),
      metadata: { blob: "x".repeat(16 * 1024 - 20) },
    });
    expect(endpoint.types).toHaveLength(100);
  });

  test.each([
    ["abc", "whsec_abc="],
    ["QQ==", "whsec_QQ=="],
    ["23 bytes", `whsec_${Buffer.alloc(23, 1).toString("base64")}`],
  ])(
    "refuses a secret shorter than 24 bytes (%s) on create and rotateSecret, writing nothing",
    async (_, secret) => {
      const h = await harness();
      const failure = {
        code: "INVALID_ENDPOINT",
        message: expect.stringMatching(/secret.*at least 24 random bytes/s),
      };
      await expect(
        h.postel.outbound.endpoints.create({ url: h.receiver.url(), secret }),
      ).rejects.toMatchObject(failure);
      expect((await h.postel.outbound.endpoints.list()).items).toEqual([]);
      const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url() });
      const before = await h.postel.outbound.endpoints.secret(endpoint.id);
      await expect(h.postel.outbound.endpoints.rotateSecret(endpoint.id, { secret })).rejects.toMatchObject(
        failure,
      );
      expect(await h.postel.outbound.endpoints.secret(endpoint.id)).toBe(before);
    },
  );

  test("refuses a malformed secret, naming the field", async () => {
    const h = await harness();
    await expect(
      h.postel.outbound.endpoints.create({ url: h.receiver.url(), secret: "whsec_!!!" }),
    ).rejects.toMatchObject({
      code: "INVALID_ENDPOINT",
      message: expect.stringContaining("secret"),
    });
  });
});
