import { createHmac } from "node:crypto";
import { describe, expect, test } from "vitest";
import { shopify } from "./shopify.js";

const SECRET = "shpss_0123456789abcdef";
const body = Buffer.from('{"id":820982911946154508,"email":"jon@example.com"}');

describe("shopify", () => {
  test("verifies a base64 HMAC-SHA256 of the body and reports the webhook id and trigger time", () => {
    const hmac = createHmac("sha256", SECRET).update(body).digest("base64");
    const headers = {
      "X-Shopify-Hmac-Sha256": hmac,
      "X-Shopify-Webhook-Id": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
      "X-Shopify-Triggered-At": "2023-03-29T18:00:27.877041743Z",
    };
    expect(shopify({ secret: SECRET }).verify({ body, headers }, 0)).toEqual({
      scheme: "shopify",
      id: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
      timestamp: new Date("2023-03-29T18:00:27.877Z"),
      keyIndex: 0,
    });
  });

  test("leaves the timestamp undefined when the trigger time is absent or unreadable", () => {
    const headers = { ...shopify.sign({ secret: SECRET, body }), "x-shopify-triggered-at": "yesterday" };
    expect(shopify({ secret: SECRET }).verify({ body, headers }, 0).timestamp).toBeUndefined();
  });

  test("reports which secret matched during a rotation", () => {
    const headers = shopify.sign({ secret: SECRET, body });
    expect(shopify({ secrets: ["shpss_old", SECRET] }).verify({ body, headers }, 0).keyIndex).toBe(1);
  });

  test("rejects a hex digest where base64 is expected, and a wrong secret", () => {
    const hex = createHmac("sha256", SECRET).update(body).digest("hex");
    expect(() =>
      shopify({ secret: SECRET }).verify({ body, headers: { "x-shopify-hmac-sha256": hex } }, 0),
    ).toThrow(expect.objectContaining({ code: "SIGNATURE_INVALID" }));
    const headers = shopify.sign({ secret: SECRET, body });
    expect(() => shopify({ secret: "shpss_other" }).verify({ body, headers }, 0)).toThrow(
      expect.objectContaining({ code: "SIGNATURE_INVALID" }),
    );
  });

  test("rejects a request without the header as MISSING_HEADER", () => {
    expect(() => shopify({ secret: SECRET }).verify({ body, headers: {} }, 0)).toThrow(
      expect.objectContaining({ code: "MISSING_HEADER", header: "x-shopify-hmac-sha256" }),
    );
  });
});
