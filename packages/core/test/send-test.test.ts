import { verify } from "@postel/signing";
import * as v from "valibot";
import { describe, expect, test } from "vitest";
import { ExponentialBackoff } from "../src/backoff.js";
import { defineEvents } from "../src/outbound/catalog.js";
import { harness } from "./support/harness.js";
import { refusal } from "./support/refusal.js";

const events = defineEvents({
  "order.created": {
    schema: v.object({ id: v.string(), total: v.number() }),
    description: "An order was placed.",
    examples: [{ id: "ord_example", total: 12.5 }],
  },
  "invoice.paid": {
    schema: v.object({ id: v.string() }),
    description: "An invoice was paid.",
    examples: [{ id: "inv_example" }],
  },
});

describe("endpoints.sendTest()", () => {
  test("reaches its endpoint only, whatever the globs, signed, with the catalog's example, marked in the trail", async () => {
    const h = await harness({ events });
    const target = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/target"),
      types: ["invoice.*"],
    });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/orders"), types: ["order.*"] });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/all"), types: ["*"] });
    const { id } = await h.postel.outbound.endpoints.sendTest(target.id, { type: "order.created" });
    await h.postel.drain();

    expect(h.receiver.requests.map((request) => request.path)).toEqual(["/target"]);
    const [request] = h.receiver.on("/target");
    const body = JSON.parse(request!.body.toString()) as { type: string; data: unknown };
    expect(body).toMatchObject({ type: "order.created", data: { id: "ord_example", total: 12.5 } });
    const secret = await h.postel.outbound.endpoints.secret(target.id);
    expect(() =>
      verify(request!.body, request!.headers, { keys: secret, now: () => h.clock.now() }),
    ).not.toThrow();

    const message = await h.postel.outbound.messages.get(id);
    expect(message).toMatchObject({ testEndpointId: target.id, status: "dispatched" });
    const deliveries = await h.postel.outbound.messages.deliveries(id);
    expect(deliveries.map((d) => [d.endpointId, d.status])).toEqual([[target.id, "succeeded"]]);
    expect(await h.postel.outbound.messages.attempts(id)).toHaveLength(1);
    // A normal send of the same type still goes where the globs say, and is not marked.
    const normal = await h.postel.outbound.send({ type: "order.created", data: { id: "ord_1", total: 1 } });
    await h.postel.drain();
    expect(h.receiver.on("/target")).toHaveLength(1);
    expect(h.receiver.on("/orders")).toHaveLength(1);
    expect(await h.postel.outbound.messages.get(normal.id)).not.toHaveProperty("testEndpointId");
  });

  test("goes through the normal pipeline: a failed attempt is retried on the schedule", async () => {
    const h = await harness({ events, retryPolicy: ExponentialBackoff({ jitter: 0 }) });
    h.receiver.script("/target", (i) => (i === 0 ? 500 : 200));
    const target = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/target") });
    const { id } = await h.postel.outbound.endpoints.sendTest(target.id, {
      type: "invoice.paid",
      data: { id: "inv_given" },
    });
    await h.postel.drain();
    h.clock.advance("5s");
    await h.postel.drain();
    expect(h.receiver.on("/target").map((r) => JSON.parse(r.body.toString()).data)).toEqual([
      { id: "inv_given" },
      { id: "inv_given" },
    ]);
    expect((await h.postel.outbound.messages.deliveries(id))[0]?.status).toBe("succeeded");
  });

  test("the endpoint's tenant is the message's, so no other tenant's endpoint could match it either", async () => {
    const h = await harness({ events });
    const target = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/acme"),
      tenantId: "acme",
    });
    const { id } = await h.postel.outbound.endpoints.sendTest(target.id, { type: "invoice.paid" });
    expect((await h.postel.outbound.messages.get(id))?.tenantId).toBe("acme");
  });

  test("refuses, before anything is written: an unknown endpoint, an undeclared type, bad data, no data without a catalog", async () => {
    const h = await harness({ events });
    const target = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/target") });
    const tests = h.postel.outbound.endpoints;
    expect((await refusal(tests.sendTest("ep_missing", { type: "order.created" }))).code).toBe(
      "ENDPOINT_NOT_FOUND",
    );
    expect((await refusal(tests.sendTest(target.id, { type: "order.creatd" }))).code).toBe(
      "UNKNOWN_EVENT_TYPE",
    );
    const bad = await refusal(tests.sendTest(target.id, { type: "order.created", data: { id: 1 } }));
    expect(bad.code).toBe("INVALID_EVENT_DATA");
    expect(bad.message).toContain("data.id");
    expect(
      (await refusal(tests.sendTest(target.id, { type: "order.created", url: "x" } as never))).code,
    ).toBe("INVALID_ARGUMENT");
    expect(await h.postel.outbound.messages.list()).toMatchObject({ items: [] });

    const plain = await harness();
    const endpoint = await plain.postel.outbound.endpoints.create({ url: plain.receiver.url("/p") });
    const missing = await refusal(plain.postel.outbound.endpoints.sendTest(endpoint.id, { type: "ping" }));
    expect(missing).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(missing.message).toContain("without an event catalog");
    // Without a catalog, any valid type with the data given.
    await plain.postel.outbound.endpoints.sendTest(endpoint.id, { type: "ping", data: { hello: 1 } });
    await plain.postel.drain();
    expect(plain.receiver.on("/p")).toHaveLength(1);
  });
});
