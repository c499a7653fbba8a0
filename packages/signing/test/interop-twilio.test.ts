import { createHash } from "node:crypto";
import { parse, stringify } from "node:querystring";
import twilioSdk from "twilio";
import { describe, expect, test, vi } from "vitest";
import { type TwilioOptions, twilio } from "../src/index.js";

// twilio@6 (Node >= 20) runs here; validateRequest and getExpectedTwilioSignature are pure functions.
const authToken = "12345";
const sharedKeySecret = "shared-key-secret-of-a-webhooks-setting";
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

/** Whether ours accepts: true, or the error code it refused with. */
function ours(
  options: TwilioOptions,
  request: { url: string; signature: string; headers?: Record<string, string>; body?: Buffer },
): true | string {
  try {
    twilio(options).verify(
      {
        body: request.body ?? body,
        headers: { ...form, ...request.headers, "x-twilio-signature": request.signature },
        url: request.url,
      },
      0,
    );
    return true;
  } catch (error) {
    return (error as { code: string }).code;
  }
}

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

// URLs as a server may see them. Each is received as itself and in every other form below, and
// signed over every form: ours must accept exactly what twilio.validateRequest accepts.
const received = {
  "a plain URL": "https://mycompany.com/myapp.php?foo=1&bar=2",
  "spaces in the path and query": "https://example.com/sms hook/in box?name=Jane Doe&note=a b",
  "unicode in the path and query": "https://example.com/café/ü?msg=héllo wörld&emoji=😀",
  "a unicode host": "https://bücher.example/sms?x=1",
  "quotes and reserved characters in the query":
    "https://example.com/sms?q='quoted'&plus=a+b&pct=%27&marks=!*()~&enc=a%20b&empty=&flag",
  "an explicit default port": "https://example.com:443/sms?x=1",
  "a non-default port": "http://example.com:8080/sms?to=+15551234567",
  "an upper-case host and no path": "https://Example.COM?x=1",
  "an IPv6 host with a port": "http://[::1]:3000/sms?x=y z",
};

/** The forms a back end may have signed a URL in: as is, as `new URL()` writes it, re-encoded, ports. */
function forms(raw: string): string[] {
  const href = new URL(raw).href;
  const query = href.indexOf("?");
  const legacy = query === -1 ? href : `${href.slice(0, query)}?${stringify(parse(href.slice(query + 1)))}`;
  const withPort = (u: string) =>
    u.replace(
      /^(https?):\/\/([^/?#]*?)(:\d+)?(?=[/?#]|$)/i,
      (_m, scheme: string, host: string) =>
        `${scheme}://${host}:${scheme.toLowerCase() === "https" ? 443 : 80}`,
    );
  const withoutPort = (u: string) => u.replace(/^(https?:\/\/[^/?#]*?)(:\d+)(?=[/?#]|$)/i, "$1");
  return [...new Set([raw, href, legacy, withPort(raw), withoutPort(raw), withPort(href), withPort(legacy)])];
}

const formParams = {
  Body: "héllo & goodbye = 'x' + 100%",
  From: "+15551234567",
  MediaUrl0: "https://api.twilio.com/2010-04-01/Media/ME1?x=1&y=2",
};
const formBody = Buffer.from(new URLSearchParams(formParams).toString());

describe("accepts every URL form twilio.validateRequest accepts, and nothing more", () => {
  test.each(Object.entries(received))("with %s", (_name, raw) => {
    const all = forms(raw);
    let accepted = 0;
    for (const receivedAs of all) {
      for (const signedOver of all) {
        const signature = twilioSdk.getExpectedTwilioSignature(authToken, signedOver, formParams);
        const sdk = twilioSdk.validateRequest(authToken, signature, receivedAs, formParams);
        const verdict = ours({ authToken }, { url: receivedAs, signature, body: formBody });
        expect({ receivedAs, signedOver, ours: verdict === true }).toEqual({
          receivedAs,
          signedOver,
          ours: sdk,
        });
        if (sdk) accepted++;
      }
    }
    // The URL as received, and as new URL() encodes it, always verify.
    const signature = twilioSdk.getExpectedTwilioSignature(authToken, new URL(raw).href, formParams);
    expect(ours({ authToken }, { url: raw, signature, body: formBody })).toBe(true);
    expect(accepted).toBeGreaterThanOrEqual(all.length);
  });

  test("refuses a signature over another path, query or host, as the SDK does", () => {
    const raw = received["spaces in the path and query"];
    for (const other of [
      raw.replace("in box", "out box"),
      raw.replace("Jane", "John"),
      raw.replace("example.com", "example.org"),
      raw.replace("https:", "http:"),
    ]) {
      const signature = twilioSdk.getExpectedTwilioSignature(authToken, new URL(other).href, formParams);
      expect(twilioSdk.validateRequest(authToken, signature, raw, formParams)).toBe(false);
      expect(ours({ authToken }, { url: raw, signature, body: formBody })).toBe("SIGNATURE_INVALID");
    }
  });
});

describe("SharedKey signatures (X-Twilio-Webhooks-Signature-Settings)", () => {
  const settings = (algorithm?: string) => ({
    "x-twilio-webhooks-signature-settings": `key=webhooks_sharedkey_01,${algorithm ? `algorithm=${algorithm}` : ""}`,
  });

  test.each([
    ["HMAC_SHA256", "HMAC_SHA256"],
    ["HMAC_SHA1", "HMAC_SHA1"],
    ["lower-case hmac_sha256", "hmac_sha256"],
    ["no algorithm (HMAC_SHA1)", undefined],
  ])("we verify what the SDK signs with %s, for a URL new URL() re-encodes", (_name, algorithm) => {
    const raw = received["unicode in the path and query"];
    const headers = settings(algorithm);
    const signature = twilioSdk.getExpectedTwilioSignature(
      sharedKeySecret,
      new URL(raw).href,
      formParams,
      twilioSdk.getSignatureAlgorithm(headers["x-twilio-webhooks-signature-settings"]),
    );
    const sdkAlgorithm = twilioSdk.getSignatureAlgorithm(headers["x-twilio-webhooks-signature-settings"]);
    expect(twilioSdk.validateRequest(sharedKeySecret, signature, raw, formParams, sdkAlgorithm)).toBe(true);
    expect(ours({ authToken, sharedKeySecret }, { url: raw, signature, headers, body: formBody })).toBe(true);
    expect(ours({ sharedKeySecret }, { url: raw, signature, headers, body: formBody })).toBe(true);
  });

  test("reports which SharedKey secret matched during a rotation", () => {
    const signature = twilioSdk.getExpectedTwilioSignature(sharedKeySecret, url, params, "HMAC_SHA256");
    const verifier = twilio({ authToken, sharedKeySecrets: ["older-secret", sharedKeySecret] });
    const headers = { ...form, ...settings("HMAC_SHA256"), "x-twilio-signature": signature };
    expect(verifier.verify({ body, headers, url }, 0).keyIndex).toBe(1);
  });

  test("we verify a JSON body signed with HMAC_SHA256 that validateRequestWithBody accepts", () => {
    const json = '{"EventType":"onMessageAdded","Body":"héllo"}';
    const hashed = `https://example.com/conversations hook?bodySHA256=${createHash("sha256").update(json).digest("hex")}`;
    const signature = twilioSdk.getExpectedTwilioSignature(
      sharedKeySecret,
      new URL(hashed).href,
      {},
      "HMAC_SHA256",
    );
    expect(twilioSdk.validateRequestWithBody(sharedKeySecret, signature, hashed, json, "HMAC_SHA256")).toBe(
      true,
    );
    const request = {
      url: hashed,
      signature,
      body: Buffer.from(json),
      headers: { "content-type": "application/json", ...settings("HMAC_SHA256") },
    };
    expect(ours({ sharedKeySecret }, request)).toBe(true);
    expect(ours({ sharedKeySecret }, { ...request, body: Buffer.from("{}") })).toBe("SIGNATURE_INVALID");
  });

  // twilio.webhook() picks the secret by the settings header: the auth token without it, the
  // SharedKey secret with it. Each case runs through the SDK's middleware and through ours.
  test.each([
    ["an auth-token signature without settings", authToken, undefined, false, true],
    ["a SharedKey HMAC_SHA256 signature with settings", sharedKeySecret, "HMAC_SHA256", true, true],
    ["an auth-token signature that claims SharedKey settings", authToken, "HMAC_SHA1", true, false],
    ["a SharedKey signature without the settings header", sharedKeySecret, "HMAC_SHA1", false, false],
    [
      "a SharedKey HMAC_SHA1 signature sent as HMAC_SHA256",
      sharedKeySecret,
      "HMAC_SHA1",
      "HMAC_SHA256",
      false,
    ],
    ["an unsupported algorithm", sharedKeySecret, "HMAC_SHA256", "HMAC_SHA512", false],
  ] as const)("agrees with twilio.webhook() on %s", (_name, secret, signedWith, sent, accepted) => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const raw = received["spaces in the path and query"];
    const signature = twilioSdk.getExpectedTwilioSignature(secret, raw, formParams, signedWith);
    const headers: Record<string, string> = sent === false ? {} : settings(sent === true ? signedWith : sent);
    const sdkStatus = throughSdkMiddleware(raw, { ...headers, "x-twilio-signature": signature });
    warn.mockRestore();
    expect(sdkStatus).toBe(accepted ? "next" : 403);
    const verdict = ours({ authToken, sharedKeySecret }, { url: raw, signature, headers, body: formBody });
    expect(verdict === true).toBe(accepted);
    if (!accepted) expect(verdict).toBe("SIGNATURE_INVALID");
  });

  test("names the missing secret when Twilio signed with the kind that is not configured", () => {
    const withSettings = twilio({ authToken });
    const headers = { ...form, ...settings("HMAC_SHA256"), "x-twilio-signature": "x" };
    expect(() => withSettings.verify({ body, headers, url }, 0)).toThrow(
      /pass twilio\(\{ sharedKeySecret \}\)/,
    );
    const withoutSettings = twilio({ sharedKeySecret });
    expect(() =>
      withoutSettings.verify({ body, headers: { ...form, "x-twilio-signature": "x" }, url }, 0),
    ).toThrow(/pass twilio\(\{ authToken \}\) too/);
  });
});

/** Runs the SDK's Express middleware on a stand-in request: "next" when it let the request through. */
function throughSdkMiddleware(webhookUrl: string, headers: Record<string, string>): "next" | number {
  const middleware = twilioSdk.webhook(authToken, { sharedKeySecret, url: webhookUrl });
  let outcome: "next" | number = "next";
  const response = {
    type: () => response,
    status: (code: number) => {
      outcome = code;
      return response;
    },
    send: () => response,
  };
  const request = {
    header: (name: string) => headers[name.toLowerCase()],
    headers,
    body: formParams,
    protocol: "https",
    originalUrl: "/",
  };
  middleware(request as never, response as never, () => {});
  return outcome;
}
