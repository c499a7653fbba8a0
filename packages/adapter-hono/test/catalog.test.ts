import { Receiver, type VerifiedEvent } from "@postel/core/inbound";
import { conformanceEvents as events, signedEvent } from "@postel/core/testing";
import { generateSecret } from "@postel/signing";
import { Hono } from "hono";
import { expect, expectTypeOf, onTestFinished, test } from "vitest";
import { type HonoWebhookHandler, webhook } from "../src/index.js";
import { listen } from "./serve.js";

// What a source given the catalog (events) answers is in the conformance suite; here, Hono's own.
const secret = generateSecret();
const receiver = Receiver({
  sources: {
    shop: { verify: secret, events },
    billing: { verify: secret, schema: events.definitions["order.refunded"].schema },
    crm: { verify: secret },
  },
});

test("the route's next handler reads the catalog event with c.get('webhook'), its type narrowing its data", async () => {
  const app = new Hono().post("/webhooks", webhook(receiver, "shop"), (c) => {
    const event = c.get("webhook");
    if (event.type !== "order.created") return c.text("not an order", 400);
    expectTypeOf(event.data).toEqualTypeOf<{ id: string; email: Lowercase<string> }>();
    return c.json({ email: event.data.email }, 202);
  });
  const server = await listen(app);
  onTestFinished(() => server.close());
  const response = await server.post(...signedEvent(secret, "order.created", { id: "o", email: "Ada@X.IO" }));
  expect([response.status, JSON.parse(response.text)]).toEqual([202, { email: "ada@x.io" }]);
});

test("types the handler's event: event.type narrows event.data, a schema source keeps its payload (checked by tsc)", () => {
  webhook(receiver, "shop", (event, c) => {
    expectTypeOf(c.get("webhook")).toEqualTypeOf(event);
    if (event.type === "order.refunded")
      expectTypeOf(event.data).toEqualTypeOf<{ id: string; amount: number }>();
    // @ts-expect-error "order.shipped" is not a type of the catalog
    return event.type === "order.shipped";
  });
  webhook(receiver, "billing", (_event, c) => expectTypeOf(c.get("webhook").payload.amount).toBeNumber());
  webhook(receiver, "crm", (event) => expectTypeOf(event.payload).toBeUnknown());
  // The exported handler type keeps its meaning: the event type parameter.
  type Paid = VerifiedEvent<{ total: number }>;
  expectTypeOf<HonoWebhookHandler<Paid>>().parameter(0).toEqualTypeOf<Paid>();
});
