import { InMemoryDedupStore, Receiver, type StandardSchemaV1 } from "@postel/core/inbound";
import { generateSecret, sign, twilio } from "@postel/signing";
import { NextRequest } from "next/server.js";
import { describe, expect, expectTypeOf, test, vi } from "vitest";
import { webhookRoute } from "../src/index.js";

type Order = { type: string; total: number };
const order: StandardSchemaV1<unknown, Order> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate: (value) =>
      typeof (value as Partial<Order>).total === "number"
        ? { value: value as Order }
        : { issues: [{ message: "expected a total", path: ["total"] }] },
  },
};

const secret = generateSecret();
const body = '{"type":"order.paid",  "total":12}';
const post = (headers: Record<string, string>, payload: string = body) =>
  new NextRequest("https://shop.example/api/webhooks", { method: "POST", body: payload, headers });
const signed = (id = "msg_1") => sign({ id, timestamp: new Date(), body, keys: [secret] });

describe("webhookRoute (App Router)", () => {
  test("runs the handler with the typed event and Next's request, and answers a real Response", async () => {
    const receiver = Receiver({
      sources: { shop: { verify: secret, schema: order, dedup: InMemoryDedupStore() } },
    });
    const seen: unknown[] = [];
    const POST = webhookRoute(receiver, "shop", (event, request) => {
      expectTypeOf(event.payload).toEqualTypeOf<Order>();
      seen.push(event.payload.total, request.url);
    });
    const response = await POST(post(signed()));
    expect(response).toBeInstanceOf(Response);
    expect([response.status, response.headers.get("content-type")]).toEqual([200, "application/json"]);
    expect(seen).toEqual([12, "https://shop.example/api/webhooks"]);
    const again = await POST(post(signed()));
    expect(again.headers.get("x-postel-duplicate")).toBe("true");
  });

  test("answers a refusal with the gate's code in x-postel-error and the JSON error body", async () => {
    const POST = webhookRoute(Receiver({ sources: { shop: { verify: secret } } }), "shop", () => {});
    const response = await POST(post({ ...signed(), "webhook-signature": "v1,AAAA" }));
    expect(response.status).toBe(401);
    expect(response.headers.get("x-postel-error")).toBe("SIGNATURE_INVALID");
    expect(JSON.parse(await response.text()).error.code).toBe("SIGNATURE_INVALID");
  });

  test("reports what the handler threw to onError, and to console.error by default", async () => {
    const receiver = Receiver({ sources: { shop: { verify: secret } } });
    const failing = () => Promise.reject(new Error("db down"));
    const reported: unknown[] = [];
    const response = await webhookRoute(receiver, "shop", failing, { onError: (e) => reported.push(e) })(
      post(signed()),
    );
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain("db down");
    expect(reported).toEqual([new Error("db down")]);

    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    await webhookRoute(receiver, "shop", failing)(post(signed("msg_2")));
    expect(logged).toHaveBeenCalledWith(new Error("db down"));
    logged.mockRestore();
  });

  test("passes the absolute request URL, so URL-signed (Twilio) webhooks verify", async () => {
    const authToken = "twilio-auth-token";
    const receiver = Receiver({ sources: { sms: { verify: twilio({ authToken }), parse: "form" } } });
    const events: unknown[] = [];
    const POST = webhookRoute(receiver, "sms", (event) => events.push(event.payload));
    const headers = {
      "content-type": "application/x-www-form-urlencoded",
      ...twilio.sign({ authToken, url: "https://shop.example/api/webhooks", params: { Body: "hi" } }),
    };
    const response = await POST(post(headers, "Body=hi"));
    expect(response.status).toBe(200);
    expect(events).toEqual([{ Body: "hi" }]);
  });
});
