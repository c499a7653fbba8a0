import Stripe from "stripe";
import { describe, expect, test } from "vitest";
import { stripe } from "../src/index.js";

// stripe@23 (Node >= 20) runs here; its webhook helpers need no network or real API key.
const client = new Stripe("sk_test_interop_not_a_real_key");
const secret = "whsec_test_interop_secret";
const payload = JSON.stringify({
  id: "evt_1",
  object: "event",
  type: "charge.succeeded",
  data: { object: {} },
});
const timestamp = 1_700_000_000;

describe("interoperability with stripe (official SDK)", () => {
  test("we verify a header made by stripe.webhooks.generateTestHeaderString", () => {
    const header = client.webhooks.generateTestHeaderString({ payload, secret, timestamp });
    const request = { body: Buffer.from(payload), headers: { "stripe-signature": header } };
    expect(stripe({ secret }).verify(request, timestamp * 1000)).toMatchObject({
      scheme: "stripe",
      keyIndex: 0,
    });
  });

  test("stripe.webhooks.constructEvent accepts the header we produce", () => {
    const { "stripe-signature": header } = stripe.sign({ secret, timestamp, body: payload });
    const event = client.webhooks.constructEvent(payload, header, secret, 300, undefined, timestamp * 1000);
    expect(event.id).toBe("evt_1");
  });

  test("both reject a header made with another secret", () => {
    const header = client.webhooks.generateTestHeaderString({ payload, secret: "whsec_other", timestamp });
    const request = { body: Buffer.from(payload), headers: { "stripe-signature": header } };
    expect(() => stripe({ secret }).verify(request, timestamp * 1000)).toThrow(
      expect.objectContaining({ code: "SIGNATURE_INVALID" }),
    );
    expect(() =>
      client.webhooks.constructEvent(payload, header, secret, 300, undefined, timestamp * 1000),
    ).toThrow();
  });
});
