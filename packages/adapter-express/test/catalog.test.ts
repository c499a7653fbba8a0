import { type CatalogPayload, Receiver, type VerifiedEvent } from "@postel/core/inbound";
import { conformanceEvents as events, signedEvent } from "@postel/core/testing";
import { generateSecret } from "@postel/signing";
import express from "express";
import { expect, expectTypeOf, onTestFinished, test } from "vitest";
import { type ExpressWebhookHandler, webhook } from "../src/index.js";
import { listen } from "./listen.js";

// What a source given the catalog (events) answers is in the conformance suite; here, Express's own.
const secret = generateSecret();
type Refunded = { id: string; amount: number };
const refunded = events.definitions["order.refunded"].schema;

test("sets res.locals.webhook to the catalog event the handler gets", async () => {
  const receiver = Receiver({ sources: { shop: { verify: secret, events } } });
  const seen: unknown[] = [];
  const route = webhook(receiver, "shop", (event, _req, res) => {
    seen.push(event.data, res.locals["webhook"] === event);
  });
  const server = await listen(express().post("/webhooks", route));
  onTestFinished(() => server.close());
  const response = await server.post(...signedEvent(secret, "order.refunded", { id: "o", amount: 2 }));
  expect([response.status, seen]).toEqual([200, [{ id: "o", amount: 2 }, true]]);
});

test("types the handler's event: event.type narrows event.data, a schema source keeps its payload (checked by tsc)", () => {
  const receiver = Receiver({
    sources: {
      shop: { verify: secret, events },
      billing: { verify: secret, schema: refunded },
      crm: { verify: secret },
    },
  });
  webhook(receiver, "shop", (event) => {
    if (event.type === "order.created") expectTypeOf(event.data.email).toEqualTypeOf<Lowercase<string>>();
    else expectTypeOf(event.payload).toEqualTypeOf<CatalogPayload<"order.refunded", Refunded>>();
    // @ts-expect-error "order.shipped" is not a type of the catalog
    return event.type === "order.shipped";
  });
  webhook(receiver, "billing", (event) => expectTypeOf(event).toEqualTypeOf<VerifiedEvent<Refunded>>());
  webhook(receiver, "crm", (event) => expectTypeOf(event.payload).toBeUnknown());
  // The exported handler type keeps its meaning: the payload type parameter alone.
  expectTypeOf<ExpressWebhookHandler<Refunded>>().parameter(0).toEqualTypeOf<VerifiedEvent<Refunded>>();
});
