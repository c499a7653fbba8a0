import { createHash } from "node:crypto";
import twilioSdk from "twilio";
import { describe, expect, test } from "vitest";
import { twilio } from "../src/index.js";

// twilio@6 (Node >= 20) runs here; validateRequest and getExpectedTwilioSignature are pure functions.
const authToken = "12345";
const url = "https://mycompany.com/myapp.php?foo=1&bar=2";
const params = {
  CallSid: "CA1234567890ABCDE",
  Caller: "+14158675310",
  Digits: "1234",
  From: "+14158675310",
  To: "+18005551212",
};
const body = Buffer.from(new URLSearchParams(params).toString());
const form = { "content-type": "application/x-www-form-urlencoded; charset=utf-8" };

describe("interoperability with twilio (official SDK)", () => {
  test("we verify a signature from twilio.getExpectedTwilioSignature", () => {
    const signature = twilioSdk.getExpectedTwilioSignature(authToken, url, params);
    const request = { body, headers: { ...form, "X-Twilio-Signature": signature }, url };
    expect(twilio({ authToken }).verify(request, 0).keyIndex).toBe(0);
  });

  test("twilio.validateRequest accepts the signature we produce", () => {
    const { "x-twilio-signature": signature } = twilio.sign({ authToken, url, params });
    expect(twilioSdk.validateRequest(authToken, signature, url, params)).toBe(true);
    expect(twilioSdk.validateRequest(authToken, signature, url, { ...params, Digits: "0" })).toBe(false);
  });

  test("both agree on a request signed with a URL carrying the default port", () => {
    const signature = twilioSdk.getExpectedTwilioSignature(
      authToken,
      "https://mycompany.com:443/myapp.php?foo=1&bar=2",
      params,
    );
    expect(twilioSdk.validateRequest(authToken, signature, url, params)).toBe(true);
    expect(
      twilio({ authToken }).verify({ body, headers: { ...form, "x-twilio-signature": signature }, url }, 0)
        .keyIndex,
    ).toBe(0);
  });

  test("we verify a JSON body that twilio.validateRequestWithBody accepts (bodySHA256)", () => {
    const json = '{"EventType":"onMessageAdded","Body":"héllo"}';
    const hashed = `https://mycompany.com/conversations?bodySHA256=${createHash("sha256").update(json).digest("hex")}`;
    const signature = twilioSdk.getExpectedTwilioSignature(authToken, hashed, {});
    expect(twilioSdk.validateRequestWithBody(authToken, signature, hashed, json)).toBe(true);
    const request = {
      body: Buffer.from(json),
      headers: { "content-type": "application/json", "x-twilio-signature": signature },
      url: hashed,
    };
    expect(twilio({ authToken }).verify(request, 0).keyIndex).toBe(0);
  });
});
