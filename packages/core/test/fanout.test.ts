import { verify } from "@postel/signing";
import { describe, expect, test } from "vitest";
import { harness } from "./support/harness.js";

describe("fan-out", () => {
  test("matches type globs: * matches any run of characters, dots included", async () => {
    const h = await harness();
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/orders"), types: ["order.*"] });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/all"), types: ["*"] });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/invoices"), types: ["invoice.paid"] });
    await h.postel.outbound.send({ type: "order.item.created", data: 1 });
    await h.postel.outbound.send({ type: "invoice.paid", data: 2 });
    await h.postel.outbound.send({ type: "customer.deleted", data: 3 });
    await h.postel.drain();
    expect(h.receiver.on("/orders")).toHaveLength(1);
    expect(h.receiver.on("/all")).toHaveLength(3);
    expect(h.receiver.on("/invoices")).toHaveLength(1);
  });

  test("a message no endpoint matches is dispatched with no delivery", async () => {
    const h = await harness();
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/orders"), types: ["order.*"] });
    const { id } = await h.postel.outbound.send({ type: "invoice.paid", data: 1 });
    await h.postel.drain();
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("dispatched");
    expect(await h.postel.outbound.messages.deliveries(id)).toEqual([]);
  });

  test("binds endpoints late: an endpoint created after send() but before the worker runs receives it", async () => {
    const h = await harness();
    await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/late") });
    await h.postel.drain();
    expect(h.receiver.on("/late")).toHaveLength(1);
  });

  test("applies the structural filter and the registered filter function", async () => {
    const h = await harness({ filters: { vip: (event) => (event.data as { vip?: boolean }).vip === true } });
    await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/big"),
      filter: { "data.amount": { $gte: 100 } },
    });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/vip"), filterFn: "vip" });
    await h.postel.outbound.send({ type: "order.paid", data: { amount: 50, vip: true } });
    await h.postel.outbound.send({ type: "order.paid", data: { amount: 150 } });
    await h.postel.drain();
    expect(h.receiver.on("/big").map((r) => JSON.parse(r.body.toString()).data.amount)).toEqual([150]);
    expect(h.receiver.on("/vip").map((r) => JSON.parse(r.body.toString()).data.amount)).toEqual([50]);
  });

  test("refuses unregistered filter and transform names and invalid filters, writing nothing", async () => {
    const h = await harness();
    for (const input of [
      { filterFn: "nope" },
      { transform: "nope" },
      { filter: { "data.x": { $regex: "a" } } },
    ]) {
      await expect(
        h.postel.outbound.endpoints.create({ url: h.receiver.url(), ...input } as never),
      ).rejects.toMatchObject({
        code: "INVALID_ENDPOINT",
      });
    }
    expect((await h.postel.outbound.endpoints.list()).items).toEqual([]);
  });

  test("sends and signs the transformed body", async () => {
    const h = await harness({
      transforms: { slack: (event) => ({ text: `${event.type}: ${(event.data as { id: number }).id}` }) },
    });
    const endpoint = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/slack"),
      transform: "slack",
    });
    await h.postel.outbound.send({ type: "order.created", data: { id: 42 } });
    await h.postel.drain();
    const [request] = h.receiver.on("/slack");
    expect(request?.body.toString()).toBe('{"text":"order.created: 42"}');
    const secret = await h.postel.outbound.endpoints.secret(endpoint.id);
    expect(() =>
      verify(request!.body, request!.headers, { keys: secret, now: () => h.clock.now() }),
    ).not.toThrow();
  });

  test("keeps tenants apart: an endpoint only receives its own tenant's messages", async () => {
    const h = await harness();
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/acme"), tenantId: "acme" });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/globex"), tenantId: "globex" });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/untenanted") });
    await h.postel.outbound.send({ type: "a", data: "for acme", tenantId: "acme" });
    await h.postel.outbound.send({ type: "a", data: "no tenant" });
    await h.postel.drain();
    expect(h.receiver.on("/acme").map((r) => JSON.parse(r.body.toString()).data)).toEqual(["for acme"]);
    expect(h.receiver.on("/globex")).toHaveLength(0);
    expect(h.receiver.on("/untenanted").map((r) => JSON.parse(r.body.toString()).data)).toEqual([
      "no tenant",
    ]);
  });
});

describe("ttl", () => {
  test("a message whose ttl elapsed before the worker ran is expired without an HTTP call", async () => {
    const h = await harness();
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1, ttl: "1m" });
    h.clock.advance("2m");
    await h.postel.drain();
    expect(h.receiver.requests).toHaveLength(0);
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("expired");
  });

  test("a delivery whose ttl elapses between retries expires instead of retrying", async () => {
    const h = await harness();
    h.receiver.script("/hook", 500);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1, ttl: "10s" });
    await h.postel.drain();
    h.clock.advance("1h");
    await h.postel.drain();
    expect(h.receiver.requests).toHaveLength(1);
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("expired");
    expect((await h.postel.outbound.messages.deliveries(id))[0]?.status).toBe("expired");
  });
});
