import { createHmac } from "node:crypto";
import { describe, expect, test } from "vitest";
import { InvalidKeyError } from "../errors.js";
import { stripe } from "./stripe.js";

const SECRET = "whsec_test_secret";
const T = 1_700_000_000;
const NOW = T * 1000;
const body = Buffer.from('{"id":"evt_1","object":"event"}');

describe("stripe", () => {
  test("verifies a header it signed and reports the timestamp without an id", () => {
    const headers = stripe.sign({ secret: SECRET, timestamp: T, body });
    expect(stripe({ secret: SECRET }).verify({ body, headers }, NOW)).toEqual({
      scheme: "stripe",
      id: undefined,
      timestamp: new Date(NOW),
      keyIndex: 0,
    });
  });

  test("uses the literal whsec_ string as the HMAC key, not its base64 decoding", () => {
    const headers = stripe.sign({ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", timestamp: T, body });
    expect(headers["stripe-signature"]).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    const hex = createHmac("sha256", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
      .update(`${T}.${body}`)
      .digest("hex");
    expect(headers["stripe-signature"]).toBe(`t=${T},v1=${hex}`);
  });

  test("accepts any matching v1 among several and ignores v0", () => {
    const good = stripe.sign({ secret: SECRET, timestamp: T, body })["stripe-signature"].split(",")[1];
    const headers = { "stripe-signature": `t=${T},v0=${"0".repeat(64)},v1=${"a".repeat(64)},${good}` };
    expect(stripe({ secret: SECRET }).verify({ body, headers }, NOW).keyIndex).toBe(0);
  });

  test("reports which secret matched during a rotation", () => {
    const headers = stripe.sign({ secret: SECRET, timestamp: T, body });
    expect(stripe({ secrets: ["whsec_old", SECRET] }).verify({ body, headers }, NOW).keyIndex).toBe(1);
  });

  test("rejects a re-serialised body", () => {
    const headers = stripe.sign({ secret: SECRET, timestamp: T, body });
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
    expect(() => stripe({ secret: SECRET }).verify({ body: reserialised, headers }, NOW)).toThrow(
      expect.objectContaining({ code: "SIGNATURE_INVALID" }),
    );
  });

  test("applies a 300 s window either side by default and a custom tolerance in ms", () => {
    const headers = stripe.sign({ secret: SECRET, timestamp: T, body });
    const verifier = stripe({ secret: SECRET });
    expect(verifier.verify({ body, headers }, NOW + 300_000).keyIndex).toBe(0);
    expect(() => verifier.verify({ body, headers }, NOW + 301_000)).toThrow(/in the past/);
    expect(() => verifier.verify({ body, headers }, NOW - 301_000)).toThrow(/in the future/);
    expect(() => stripe({ secret: SECRET, tolerance: 1000 }).verify({ body, headers }, NOW + 2000)).toThrow(
      expect.objectContaining({ code: "TIMESTAMP_OUT_OF_WINDOW" }),
    );
  });

  test.each([
    ["no timestamp", `v1=${"a".repeat(64)}`],
    ["no v1 signature", `t=${T},v0=${"a".repeat(64)}`],
    ["a millisecond timestamp", `t=${NOW},v1=${"a".repeat(64)}`],
  ])("rejects a header with %s as MALFORMED_HEADER", (_, value) => {
    expect(() =>
      stripe({ secret: SECRET }).verify({ body, headers: { "Stripe-Signature": value } }, NOW),
    ).toThrow(expect.objectContaining({ code: "MALFORMED_HEADER", header: "stripe-signature" }));
  });

  test("rejects a request without the header as MISSING_HEADER", () => {
    expect(() => stripe({ secret: SECRET }).verify({ body, headers: {} }, NOW)).toThrow(
      expect.objectContaining({ code: "MISSING_HEADER" }),
    );
  });

  test("refuses to be configured without a secret, or with both forms", () => {
    expect(() => stripe({ secrets: [] })).toThrow(InvalidKeyError);
    expect(() => stripe({ secret: "" })).toThrow(InvalidKeyError);
    expect(() => stripe({ secret: "a", secrets: ["b"] } as never)).toThrow(/not both/);
  });
});
