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
    expect(await h.postel.outbound.endpoints.list()).toEqual([endpoint]);
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
