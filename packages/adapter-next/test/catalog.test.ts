import { type CatalogPayload, Receiver, type VerifiedEvent } from "@postel/core/inbound";
import { conformanceEvents as events } from "@postel/core/testing";
import { generateSecret } from "@postel/signing";
import { expectTypeOf, test } from "vitest";
import { type RouteWebhookHandler, webhookApiRoute, webhookRoute } from "../src/index.js";

// What a source given the catalog (events) answers runs in the conformance suite, for both routers.
test("event.type narrows event.data, a schema source keeps its payload, in both routers (checked by tsc)", () => {
  const secret = generateSecret();
  const schema = events.definitions["order.created"].schema;
  const receiver = Receiver({
    sources: {
      shop: { verify: secret, events },
      billing: { verify: secret, schema },
      crm: { verify: secret },
    },
  });
  type Created = { id: string; email: Lowercase<string> };
  webhookRoute(receiver, "shop", (event, request) => {
    expectTypeOf(request).toEqualTypeOf<Request>();
    if (event.type === "order.created")
      expectTypeOf(event.payload).toEqualTypeOf<CatalogPayload<"order.created", Created>>();
    // @ts-expect-error "order.shipped" is not a type of the catalog
    return event.type === "order.shipped";
  });
  webhookApiRoute(receiver, "shop", (event) => {
    if (event.type === "order.refunded") expectTypeOf(event.data.amount).toBeNumber();
    else expectTypeOf(event.data).toEqualTypeOf<Created>();
    // @ts-expect-error "order.shipped" is not a type of the catalog
    return event.type === "order.shipped";
  });
  webhookRoute(receiver, "billing", (event) => expectTypeOf(event).toEqualTypeOf<VerifiedEvent<Created>>());
  webhookApiRoute(receiver, "billing", (event) => expectTypeOf(event.payload).toEqualTypeOf<Created>());
  webhookRoute(receiver, "crm", (event) => expectTypeOf(event.payload).toBeUnknown());
  // The exported handler type keeps its meaning: the event and request type parameters.
  expectTypeOf<RouteWebhookHandler<VerifiedEvent<Created>, Request>>()
    .parameter(0)
    .toEqualTypeOf<VerifiedEvent<Created>>();
});
