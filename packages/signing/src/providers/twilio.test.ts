import { createHash, createHmac } from "node:crypto";
import { describe, expect, test } from "vitest";
import { InvalidArgumentError } from "../errors.js";
import { twilio } from "./twilio.js";

const TOKEN = "12345";
const URL_ = "https://mycompany.com/myapp.php?foo=1&bar=2";
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const params = {
  CallSid: "CA1234567890ABCDE",
  Caller: "+12349013030",
  Digits: "1234",
  From: "+12349013030",
  To: "+18005551212",
};
const body = Buffer.from(new URLSearchParams(params).toString());

describe("twilio", () => {
  test("verifies HMAC-SHA1 over the URL and the form parameters sorted by name", () => {
    const data =
      URL_ +
      Object.keys(params)
        .sort()
        .map((key) => key + params[key as keyof typeof params])
        .join("");
    const signature = createHmac("sha1", TOKEN).update(data).digest("base64");
    const headers = { ...FORM, "X-Twilio-Signature": signature, "I-Twilio-Idempotency-Token": "idem-1" };
    expect(twilio({ authToken: TOKEN }).verify({ body, headers, url: URL_ }, 0)).toEqual({
      scheme: "twilio",
      id: "idem-1",
      timestamp: undefined,
      keyIndex: 0,
    });
  });

  test("prefers the configured URL over request.url, for servers behind a proxy", () => {
    const headers = { ...FORM, ...twilio.sign({ authToken: TOKEN, url: URL_, params }) };
    const verifier = twilio({ authToken: TOKEN, url: URL_ });
    expect(
      verifier.verify({ body, headers, url: "http://10.0.0.7:3000/myapp.php?foo=1&bar=2" }, 0).keyIndex,
    ).toBe(0);
    const computed = twilio({ authToken: TOKEN, url: () => URL_ });
    expect(computed.verify({ body, headers }, 0).keyIndex).toBe(0);
  });

  test("verifies when Twilio signed the URL with the default port and the server sees it without", () => {
    const headers = {
      ...FORM,
      ...twilio.sign({ authToken: TOKEN, url: "https://mycompany.com:443/myapp.php?foo=1&bar=2", params }),
    };
    expect(twilio({ authToken: TOKEN }).verify({ body, headers, url: URL_ }, 0).keyIndex).toBe(0);
  });

  test("signs each distinct value of a repeated parameter once, in sorted order", () => {
    const repeated = Buffer.from("To=b&To=a&To=b");
    const expected = createHmac("sha1", TOKEN).update(`${URL_}ToaTob`).digest("base64");
    const headers = { ...FORM, "x-twilio-signature": expected };
    expect(twilio({ authToken: TOKEN }).verify({ body: repeated, headers, url: URL_ }, 0).keyIndex).toBe(0);
  });

  test("rejects a tampered parameter", () => {
    const headers = { ...FORM, ...twilio.sign({ authToken: TOKEN, url: URL_, params }) };
    const tampered = Buffer.from(new URLSearchParams({ ...params, Digits: "9999" }).toString());
    expect(() => twilio({ authToken: TOKEN }).verify({ body: tampered, headers, url: URL_ }, 0)).toThrow(
      expect.objectContaining({ code: "SIGNATURE_INVALID" }),
    );
  });

  test("verifies a JSON body through the bodySHA256 query parameter and rejects a different body", () => {
    const json = Buffer.from('{"EventType":"onMessageAdded"}');
    const url = `https://mycompany.com/hook?bodySHA256=${createHash("sha256").update(json).digest("hex")}`;
    const headers = { "content-type": "application/json", ...twilio.sign({ authToken: TOKEN, url }) };
    expect(twilio({ authToken: TOKEN }).verify({ body: json, headers, url }, 0).keyIndex).toBe(0);
    expect(() => twilio({ authToken: TOKEN }).verify({ body: Buffer.from("{}"), headers, url }, 0)).toThrow(
      /does not match the bodySHA256/,
    );
  });

  test("reports which auth token matched during a rotation", () => {
    const headers = { ...FORM, ...twilio.sign({ authToken: TOKEN, url: URL_, params }) };
    expect(twilio({ authTokens: ["old", TOKEN] }).verify({ body, headers, url: URL_ }, 0).keyIndex).toBe(1);
  });

  test("refuses an algorithm the settings header names but Twilio's SDK does not know, naming it", () => {
    const headers = {
      ...FORM,
      "x-twilio-signature": "abc",
      "x-twilio-webhooks-signature-settings": "key=webhooks_sharedkey_01,algorithm=HMAC_SHA512",
    };
    expect(() => twilio({ sharedKeySecret: "s" }).verify({ body, headers, url: URL_ }, 0)).toThrow(
      expect.objectContaining({
        code: "SIGNATURE_INVALID",
        message: expect.stringContaining('"HMAC_SHA512"'),
      }),
    );
  });

  test("refuses to guess when no absolute URL is known", () => {
    const headers = { ...FORM, "x-twilio-signature": "abc" };
    expect(() => twilio({ authToken: TOKEN }).verify({ body, headers }, 0)).toThrow(InvalidArgumentError);
    expect(() => twilio({ authToken: TOKEN }).verify({ body, headers, url: "/myapp.php" }, 0)).toThrow(
      /not just the path/,
    );
  });

  test("refuses a request whose Host header makes its URL unparseable as SIGNATURE_INVALID, not a configuration error", () => {
    const headers = { ...FORM, "x-twilio-signature": "abc" };
    for (const url of ["http://a b/sms", "https://[::1/sms", "http://exa%mple.com/sms"]) {
      expect(() => twilio({ authToken: TOKEN }).verify({ body, headers, url }, 0)).toThrow(
        expect.objectContaining({ code: "SIGNATURE_INVALID", message: expect.stringMatching(/Host header/) }),
      );
    }
  });

  test("rejects a request without the header as MISSING_HEADER", () => {
    expect(() => twilio({ authToken: TOKEN }).verify({ body, headers: FORM, url: URL_ }, 0)).toThrow(
      expect.objectContaining({ code: "MISSING_HEADER", header: "x-twilio-signature" }),
    );
  });
});
