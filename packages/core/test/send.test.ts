import { verify } from "@postel/signing";
import { describe, expect, test } from "vitest";
import { isPostelError } from "../src/errors.js";
import { harness } from "./support/harness.js";

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isPostelError(error), `expected a PostelError with code ${code}, got ${String(error)}`).toBe(true);
  expect((error as { code: string }).code).toBe(code);
}

describe("send()", () => {
  test("enqueues one message and reports it as new", async () => {
    const { postel } = await harness();
    const result = await postel.outbound.send({ type: "order.created", data: { id: 1 } });
    expect(result.reused).toBe(false);
    const message = await postel.outbound.messages.get(result.id);
    expect(message).toMatchObject({
      id: result.id,
      type: "order.created",
      data: { id: 1 },
      status: "pending",
    });
  });

  test("returns the first id with reused: true when the idempotency key repeats", async () => {
    const { postel } = await harness();
    const first = await postel.outbound.send({ type: "a", data: 1, idempotencyKey: "k1" });
    const second = await postel.outbound.send({ type: "a", data: 2, idempotencyKey: "k1" });
    expect(second).toEqual({ id: first.id, reused: true });
    expect((await postel.outbound.messages.list()).items).toHaveLength(1);
  });

  test.each([
    ["an invalid event type", { type: "has space", data: 1 }, "INVALID_EVENT_TYPE"],
    ["an empty event type", { type: "", data: 1 }, "INVALID_EVENT_TYPE"],
    ["BigInt data", { type: "a", data: { n: 10n } }, "PAYLOAD_NOT_SERIALIZABLE"],
    ["undefined data", { type: "a", data: undefined }, "PAYLOAD_NOT_SERIALIZABLE"],
    ["data over the size limit", { type: "a", data: "x".repeat(300_000) }, "PAYLOAD_TOO_LARGE"],
    ["a malformed ttl", { type: "a", data: 1, ttl: "5 minutes" }, "INVALID_DURATION"],
    ["an unknown field", { type: "a", data: 1, tenant: "t1" }, "INVALID_EVENT"],
    ["a non-string idempotency key", { type: "a", data: 1, idempotencyKey: 5 }, "INVALID_ARGUMENT"],
  ])("rejects %s with a coded error and writes nothing", async (_name, event, code) => {
    const { postel } = await harness();
    await expectCode(postel.outbound.send(event as never), code);
    expect((await postel.outbound.messages.list()).items).toHaveLength(0);
  });

  test.each([
    ["an idempotency key with a lone high surrogate", { idempotencyKey: "k-\ud800" }],
    ["an idempotency key with a lone low surrogate", { idempotencyKey: "k-\udfff" }],
    ["an idempotency key with NUL", { idempotencyKey: "k\u0000" }],
    ["a tenant id with NUL", { tenantId: "t\u0000" }],
    ["a tenant id with a lone surrogate", { tenantId: "\udc00t" }],
  ])(
    "refuses %s with INVALID_ARGUMENT and writes nothing (storages would not keep it apart)",
    async (_, fields) => {
      const { postel, storage } = await harness();
      await expectCode(postel.outbound.send({ type: "a", data: 1, ...fields }), "INVALID_ARGUMENT");
      expect(await storage.operations!.listMessages({ limit: 10 })).toEqual([]);
    },
  );

  test("keeps idempotency keys and tenant ids with surrogate pairs (astral characters) as they are", async () => {
    const { postel } = await harness();
    const first = await postel.outbound.send({
      type: "a",
      data: 1,
      idempotencyKey: "k-😀",
      tenantId: "t-😀",
    });
    const second = await postel.outbound.send({
      type: "a",
      data: 2,
      idempotencyKey: "k-😁",
      tenantId: "t-😀",
    });
    expect([first.reused, second.reused]).toEqual([false, false]);
    expect((await postel.outbound.messages.get(first.id))?.tenantId).toBe("t-😀");
  });

  test("rejects cyclic data with PAYLOAD_NOT_SERIALIZABLE", async () => {
    const { postel } = await harness();
    const data: Record<string, unknown> = {};
    data["self"] = data;
    await expectCode(postel.outbound.send({ type: "a", data }), "PAYLOAD_NOT_SERIALIZABLE");
  });

  test("a message sent in a rolled-back transaction never appears; a committed one is delivered", async () => {
    const { postel, storage, receiver } = await harness();
    await postel.outbound.endpoints.create({ url: receiver.url("/hook") });
    await expect(
      storage.transaction(async (tx) => {
        await postel.outbound.send({ type: "order.created", data: { id: "rolled-back" } }, { tx });
        throw new Error("business write failed");
      }),
    ).rejects.toThrow("business write failed");
    await storage.transaction(async (tx) => {
      await postel.outbound.send({ type: "order.created", data: { id: "committed" } }, { tx });
    });
    await postel.drain();
    expect(receiver.requests.map((r) => JSON.parse(r.body.toString()).data.id)).toEqual(["committed"]);
  });
});

describe("the wire format", () => {
  test("POSTs a Standard Webhooks request the receiver can verify with the endpoint secret", async () => {
    const { postel, receiver, clock } = await harness();
    const endpoint = await postel.outbound.endpoints.create({
      url: receiver.url("/hook"),
      headers: { "x-tenant": "acme" },
    });
    const { id } = await postel.outbound.send({ type: "order.created", data: { id: 7, note: "ünïcødé" } });
    await postel.drain();
    const [request] = receiver.requests;
    expect(request).toBeDefined();
    const body = JSON.parse(request!.body.toString());
    expect(body).toEqual({
      type: "order.created",
      timestamp: new Date(clock.now()).toISOString(),
      data: { id: 7, note: "ünïcødé" },
    });
    expect(request!.headers["webhook-id"]).toBe(id);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["x-tenant"]).toBe("acme");
    const secret = await postel.outbound.endpoints.secret(endpoint.id);
    const verified = verify(request!.body, request!.headers, { keys: [secret], now: () => clock.now() });
    expect(verified.id).toBe(id);
  });

  test("an endpoint's own User-Agent replaces Postel's, whatever its case: one header, its value", async () => {
    const { postel, receiver } = await harness();
    await postel.outbound.endpoints.create({
      url: receiver.url("/hook"),
      headers: { "User-Agent": "acme-hooks/2" },
    });
    await postel.outbound.send({ type: "order.created", data: {} });
    await postel.drain();
    const [request] = receiver.requests;
    expect(request!.headers["user-agent"]).toBe("acme-hooks/2");
    const names = request!.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
    expect(names.filter((name) => name === "user-agent")).toHaveLength(1);
    expect(names.filter((name) => name === "content-type")).toHaveLength(1);
  });

  test("refuses custom headers that would override webhook-* or content-type", async () => {
    const { postel, receiver } = await harness();
    await expectCode(
      postel.outbound.endpoints.create({ url: receiver.url(), headers: { "Webhook-Signature": "forged" } }),
      "INVALID_ENDPOINT",
    );
    await expectCode(
      postel.outbound.endpoints.create({ url: receiver.url(), headers: { "content-type": "text/plain" } }),
      "INVALID_ENDPOINT",
    );
    expect((await postel.outbound.endpoints.list()).items).toHaveLength(0);
  });

  test("signs with both secrets during a rotation, then only the new one after the overlap", async () => {
    const { postel, receiver, clock } = await harness();
    const endpoint = await postel.outbound.endpoints.create({ url: receiver.url("/hook") });
    const oldSecret = await postel.outbound.endpoints.secret(endpoint.id);
    const newSecret = await postel.outbound.endpoints.rotateSecret(endpoint.id, { overlap: "1h" });
    expect(await postel.outbound.endpoints.secret(endpoint.id)).toBe(newSecret);
    await postel.outbound.send({ type: "a", data: 1 });
    await postel.drain();
    const during = receiver.requests[0]!;
    expect(String(during.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const key of [oldSecret, newSecret]) {
      expect(() =>
        verify(during.body, during.headers, { keys: [key], now: () => clock.now() }),
      ).not.toThrow();
    }
    clock.advance("2h");
    await postel.outbound.send({ type: "a", data: 2 });
    await postel.drain();
    const after = receiver.requests[1]!;
    expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(() => verify(after.body, after.headers, { keys: [oldSecret], now: () => clock.now() })).toThrow();
    expect(() =>
      verify(after.body, after.headers, { keys: [newSecret], now: () => clock.now() }),
    ).not.toThrow();
  });
});
