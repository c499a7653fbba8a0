import { sign } from "@postel/signing";
import * as v from "valibot";
import { describe, expect, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { ManualClock } from "../src/clock.js";
import { ConfigurationError } from "../src/errors.js";
import { type EventOf, Receiver } from "../src/inbound.js";
import { defineEvents } from "../src/outbound/catalog.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { startReceiver } from "./support/receiver.js";

// One definition, shared by the sender and the receiver (a service's own, or a published types package).
const events = defineEvents({
  "order.created": {
    schema: v.object({ id: v.string(), total: v.number(), email: v.pipe(v.string(), v.toLowerCase()) }),
    description: "An order was placed.",
    examples: [{ id: "ord_1", total: 12.5, email: "a@example.com" }],
  },
  "order.refunded": {
    schema: z.object({ id: z.string(), amount: z.number().positive() }),
    description: "Money went back to the customer.",
    examples: [{ id: "ord_1", amount: 2 }],
  },
});

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const clock = new ManualClock(Date.parse("2026-12-01T12:00:00Z"));

function signed(body: unknown, id = "msg_1") {
  const bytes = new TextEncoder().encode(typeof body === "string" ? body : JSON.stringify(body));
  return { body: bytes, headers: sign({ keys: SECRET, id, timestamp: new Date(clock.now()), body: bytes }) };
}

const envelope = (type: string, data: unknown) => ({ type, timestamp: "2026-12-01T12:00:00.000Z", data });

function receiver(unknownTypes?: "refuse" | "acknowledge") {
  return Receiver({
    clock,
    sources: { shop: { verify: SECRET, events, ...(unknownTypes ? { unknownTypes } : {}) } },
  });
}

describe("a source given the catalog", () => {
  test("hands the handler the event with type and data (the schema's output)", async () => {
    const seen: unknown[] = [];
    const response = await receiver().handle(
      "shop",
      signed(envelope("order.created", { id: "ord_9", total: 3, email: "Ada@Example.COM" })),
      (event) => {
        seen.push({ type: event.type, data: event.data, payload: event.payload });
      },
    );
    expect(response.status).toBe(200);
    const data = { id: "ord_9", total: 3, email: "ada@example.com" };
    expect(seen).toEqual([
      {
        type: "order.created",
        data,
        payload: { type: "order.created", timestamp: "2026-12-01T12:00:00.000Z", data },
      },
    ]);
  });

  test.each([
    [
      "data its type's schema refuses",
      envelope("order.refunded", { id: "ord_1", amount: -2 }),
      "PAYLOAD_INVALID",
      /"order.refunded".*data\.amount/,
    ],
    ["no envelope", { id: "ord_1" }, "PAYLOAD_INVALID", /\{ type, timestamp, data \}/],
    [
      "an envelope without data",
      { type: "order.created", timestamp: "2026-12-01T12:00:00Z" },
      "PAYLOAD_INVALID",
      /\{ type, timestamp, data \}/,
    ],
    [
      "an undeclared type",
      envelope("order.creatd", {}),
      "UNKNOWN_EVENT_TYPE",
      /"order.creatd" is not in the catalog of source "shop"/,
    ],
    [
      "an inherited property name as the type",
      envelope("constructor", {}),
      "UNKNOWN_EVENT_TYPE",
      /"constructor"/,
    ],
  ])("refuses %s with 422 and never calls the handler", async (_, body, code, message) => {
    let called = false;
    const response = await receiver().handle("shop", signed(body), () => {
      called = true;
    });
    expect(called).toBe(false);
    expect(response.status).toBe(422);
    expect(response.headers["x-postel-error"]).toBe(code);
    expect((JSON.parse(response.body) as { error: { message: string } }).error.message).toMatch(message);
  });

  test('unknownTypes: "acknowledge" answers 200 to an undeclared type without calling the handler', async () => {
    let called = false;
    const response = await receiver("acknowledge").handle(
      "shop",
      signed(envelope("order.shipped", {})),
      () => {
        called = true;
      },
    );
    expect(called).toBe(false);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ ok: true, ignored: true });
    // Declared types are still checked.
    const bad = await receiver("acknowledge").handle(
      "shop",
      signed(envelope("order.created", { id: 1 })),
      () => {},
    );
    expect(bad.status).toBe(422);
  });

  test("verification still comes first: a bad signature is 401, whatever the body", async () => {
    const request = signed(envelope("order.created", { id: "ord_1", total: 1, email: "a@b.co" }));
    request.body[0] = "[".charCodeAt(0);
    const response = await receiver().handle("shop", request, () => {});
    expect(response.status).toBe(401);
  });

  test("bad catalog options are configuration errors", () => {
    let error: unknown;
    try {
      Receiver({
        sources: {
          a: { verify: SECRET, events: { types: [], definitions: {} } },
          b: { verify: SECRET, events, schema: v.object({}) },
          c: { verify: SECRET, events, unknownTypes: "drop" as never, parse: "form" },
          d: { verify: SECRET, unknownTypes: "acknowledge" },
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      "inbound.a.events: must be an event catalog made by defineEvents() of @postel/core",
      "inbound.b.schema: give either schema or events: with a catalog, each type's schema checks its data",
      'inbound.c.unknownTypes: must be "refuse" or "acknowledge"',
      'inbound.c.parse: must be "json" with events: catalog events are JSON',
      "inbound.d.unknownTypes: applies only with events (a catalog)",
    ]);
  });

  test("types: event.type narrows event.data; a schema-only source keeps its payload type", () => {
    const sources = {
      shop: { verify: SECRET, events },
      plain: { verify: SECRET, schema: v.object({ n: v.number() }) },
      bare: { verify: SECRET },
    };
    type Shop = EventOf<typeof sources, "shop">;
    expectTypeOf<Shop["type"]>().toEqualTypeOf<"order.created" | "order.refunded">();
    const handle = (event: Shop) => {
      if (event.type === "order.created") {
        expectTypeOf(event.data).toEqualTypeOf<{ id: string; total: number; email: string }>();
        expectTypeOf(event.payload.data).toEqualTypeOf<{ id: string; total: number; email: string }>();
      } else {
        expectTypeOf(event.type).toEqualTypeOf<"order.refunded">();
        expectTypeOf(event.data).toEqualTypeOf<{ id: string; amount: number }>();
      }
      // @ts-expect-error: not a declared type
      if (event.type === "order.shipped") return;
    };
    void handle;
    expectTypeOf<EventOf<typeof sources, "plain">["payload"]>().toEqualTypeOf<{ n: number }>();
    expectTypeOf<EventOf<typeof sources, "bare">["payload"]>().toEqualTypeOf<unknown>();
    // Receiver.handle gives the handler the same union.
    const r = Receiver({ sources });
    void (() =>
      r.handle("shop", signed({}), (event) => {
        expectTypeOf(event).toEqualTypeOf<Shop>();
      }));
  });
});

test("sender and receiver share the catalog: what a Postel sender delivers, the receiver hands over typed", async () => {
  const http = await startReceiver();
  const sender = Postel({
    clock,
    outbound: { storage: InMemoryStorage(), events, http: { allowPrivateNetworks: true, timeout: "2s" } },
  });
  try {
    const endpoint = await sender.outbound.endpoints.create({ url: http.url("/shop"), types: ["order.*"] });
    await sender.outbound.send({
      type: "order.created",
      data: { id: "ord_7", total: 9, email: "Bo@Example.com" },
    });
    await sender.outbound.send({ type: "order.refunded", data: { id: "ord_7", amount: 9 } });
    await sender.drain();
    const secret = await sender.outbound.endpoints.secret(endpoint.id);
    const gate = Receiver({ clock, sources: { shop: { verify: secret, events } } });
    const received: unknown[] = [];
    for (const request of http.on("/shop")) {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          (entry): entry is [string, string] => typeof entry[1] === "string",
        ),
      );
      const response = await gate.handle("shop", { body: new Uint8Array(request.body), headers }, (event) => {
        received.push(
          event.type === "order.created" ? ["created", event.data.email] : ["refunded", event.data.amount],
        );
      });
      expect(response.status).toBe(200);
    }
    expect(received).toEqual([
      ["created", "bo@example.com"],
      ["refunded", 9],
    ]);
  } finally {
    await sender.close();
    await http.close();
  }
});
