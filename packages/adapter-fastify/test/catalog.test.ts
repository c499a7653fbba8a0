import { type CatalogPayload, Receiver, type VerifiedEvent } from "@postel/core/inbound";
import { conformanceEvents as events, signedEvent } from "@postel/core/testing";
import { generateSecret } from "@postel/signing";
import Fastify from "fastify";
import { expect, expectTypeOf, test } from "vitest";
import { type FastifyWebhookHandler, postelWebhooks, webhookHandler } from "../src/index.js";

// What a source given the catalog (events) answers is in the conformance suite; here, Fastify's own.
const secret = generateSecret();
type Created = { id: string; email: Lowercase<string> };
const created = events.definitions["order.created"].schema;
const receiver = Receiver({
  sources: {
    shop: { verify: secret, events },
    billing: { verify: secret, schema: created },
    crm: { verify: secret },
  },
});

test("decorates the request with the catalog event the handler gets", async () => {
  const seen: unknown[] = [];
  const app = Fastify().register(postelWebhooks(receiver), {
    routes: [
      {
        url: "/shop",
        source: "shop",
        handler: (event, req) => void seen.push(event.type, req.webhook === event),
      },
    ],
  });
  const [body, headers] = signedEvent(secret, "order.created", { id: "o", email: "A@B.CO" });
  const response = await app.inject({ method: "POST", url: "/shop", body: Buffer.from(body), headers });
  await app.close();
  expect([response.statusCode, seen]).toEqual([200, ["order.created", true]]);
});

test("types each route's event: event.type narrows event.data, a schema source keeps its payload (checked by tsc)", async () => {
  const app = Fastify().register(postelWebhooks(receiver), {
    routes: [
      {
        url: "/shop",
        source: "shop",
        handler: (event) => {
          if (event.type === "order.refunded") expectTypeOf(event.data.amount).toBeNumber();
          else expectTypeOf(event.payload).toEqualTypeOf<CatalogPayload<"order.created", Created>>();
          // @ts-expect-error "order.shipped" is not a type of the catalog
          return event.type === "order.shipped";
        },
      },
      {
        url: "/billing",
        source: "billing",
        handler: (event) => expectTypeOf(event.payload).toEqualTypeOf<Created>(),
      },
      { url: "/crm", source: "crm", handler: (event) => expectTypeOf(event.payload).toBeUnknown() },
    ],
  });
  await expect(app.ready()).resolves.toBeDefined();
  await app.close();
  // webhookHandler() on its own types the event the same way.
  webhookHandler(receiver, "shop", (event) => {
    if (event.type === "order.created") expectTypeOf(event.data).toEqualTypeOf<Created>();
  });
  // The exported handler type keeps its meaning: the payload type parameter alone.
  expectTypeOf<FastifyWebhookHandler<Created>>().parameter(0).toEqualTypeOf<VerifiedEvent<Created>>();
});
