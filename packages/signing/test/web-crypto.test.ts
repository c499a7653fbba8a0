import { createHash, createHmac, generateKeyPairSync, sign as cryptoSign } from "node:crypto";
import { readFileSync } from "node:fs";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import twilioSdk from "twilio";
import { afterEach, describe, expect, test, vi } from "vitest";
import * as node from "../src/index.js";
import { apply, type Mutation, mutation, type PlainRequest } from "./mutations.js";

// The same sources loaded a second time with `#crypto` resolved to the Web Crypto variant: what a
// bundle for Cloudflare Workers or Vercel Edge runs. Node 20's `crypto.subtle` has Ed25519, so both
// variants run side by side here: requests are signed with node:crypto and each one must get the
// same verdict (result or error code) from `verify` (node:crypto) and from `verifyAsync` (Web Crypto).
vi.doMock("#crypto", () => import("../src/internal/crypto-web.js"));
vi.resetModules();
const web = await import("../src/index.js");
const webInbound = await import("../src/inbound.js");

const T = 1_700_000_000;
const NOW = T * 1000;
const BODY = Buffer.from('{"type":"invoice.paid","data":{"id":"in_1"}}');
const SECRET = node.generateSecret();
const PAIR = node.generateKeyPair();
const PROVIDER_SECRET = "provider-secret-0123456789abcdef";
const TWILIO_URL = "https://hooks.example.com/sms?site=1";
const FORM = { "content-type": "application/x-www-form-urlencoded" };

type Api = typeof node;
type Outcome = { ok: true; result: node.VerifiedWebhook } | { ok: false; code: string };

async function outcome(run: () => unknown): Promise<Outcome> {
  try {
    return { ok: true, result: (await run()) as node.VerifiedWebhook };
  } catch (error) {
    if (!node.isPostelError(error)) throw error;
    return { ok: false, code: error.code };
  }
}

/** The verdict of the node:crypto variant's sync `verify`, which the Web Crypto path must reproduce. */
const viaNode = (verifier: node.Verifier, request: PlainRequest) =>
  outcome(() => verifier.verify(request, NOW));
const viaWeb = (verifier: node.Verifier, request: PlainRequest) =>
  outcome(() => verifier.verifyAsync!(request, NOW));

function standardRequest(keys: string | string[], body: Uint8Array = BODY, timestamp = T): PlainRequest {
  return { body, headers: node.sign({ id: "msg_1", timestamp, body, keys }) };
}

/** Each scheme: a verifier factory (run against either build) and a request signed with node:crypto. */
const SCHEMES: { name: string; verifier(api: Api): node.Verifier; sign(body: Buffer): PlainRequest }[] = [
  {
    name: "standard-webhooks v1 (HMAC)",
    verifier: (api) => api.createVerifier(SECRET),
    sign: (body) => standardRequest(SECRET, body),
  },
  {
    name: "standard-webhooks v1a (Ed25519)",
    verifier: (api) => api.createVerifier(PAIR.publicKey),
    sign: (body) => standardRequest(PAIR.privateKey, body),
  },
  {
    name: "stripe",
    verifier: (api) => api.stripe({ secret: PROVIDER_SECRET }),
    sign: (body) => ({ body, headers: node.stripe.sign({ secret: PROVIDER_SECRET, timestamp: T, body }) }),
  },
  {
    name: "github",
    verifier: (api) => api.github({ secret: PROVIDER_SECRET }),
    sign: (body) => ({ body, headers: node.github.sign({ secret: PROVIDER_SECRET, body }) }),
  },
  {
    name: "shopify",
    verifier: (api) => api.shopify({ secret: PROVIDER_SECRET }),
    sign: (body) => ({ body, headers: node.shopify.sign({ secret: PROVIDER_SECRET, body }) }),
  },
  {
    name: "slack",
    verifier: (api) => api.slack({ signingSecret: PROVIDER_SECRET }),
    sign: (body) => ({
      body,
      headers: node.slack.sign({ signingSecret: PROVIDER_SECRET, timestamp: T, body }),
    }),
  },
  {
    name: "twilio",
    verifier: (api) => api.twilio({ authToken: PROVIDER_SECRET }),
    sign: (body) => {
      const params = Object.fromEntries(new URLSearchParams(body.toString("utf8")));
      const headers = {
        ...FORM,
        ...node.twilio.sign({ authToken: PROVIDER_SECRET, url: TWILIO_URL, params }),
      };
      return { body, headers, url: TWILIO_URL };
    },
  },
];

const BODY_FOR: Record<string, Buffer> = Object.fromEntries(
  SCHEMES.map(({ name }) => [name, name === "twilio" ? Buffer.from("Body=hi&From=%2B15550100") : BODY]),
);

const bodyFor = (name: string) =>
  name === "twilio"
    ? fc
        .dictionary(fc.stringMatching(/^[A-Za-z]{1,8}$/), fc.string({ maxLength: 12 }), {
          minKeys: 1,
          maxKeys: 5,
        })
        .map((params) => Buffer.from(new URLSearchParams(params).toString()))
    : fc.jsonValue({ maxDepth: 2 }).map((value) => Buffer.from(JSON.stringify({ data: value })));

describe.each(SCHEMES)("Web Crypto path: $name", (scheme) => {
  const nodeVerifier = scheme.verifier(node);
  const webVerifier = scheme.verifier(web);

  test("accepts what node:crypto signed, with the same result as the sync verify", async () => {
    const request = scheme.sign(BODY_FOR[scheme.name]!);
    const expected = await viaNode(nodeVerifier, request);
    expect(expected.ok).toBe(true);
    expect(await viaWeb(webVerifier, request)).toEqual(expected);
  });

  test("refuses a tampered body with SIGNATURE_INVALID", async () => {
    const request = scheme.sign(BODY_FOR[scheme.name]!);
    const tampered = { ...request, body: Buffer.concat([request.body, Buffer.from("x")]) };
    expect(await viaWeb(webVerifier, tampered)).toEqual({ ok: false, code: "SIGNATURE_INVALID" });
  });

  test("gives every mutated request the verdict node:crypto gives it", async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyFor(scheme.name),
        fc.array(mutation(), { minLength: 1, maxLength: 3 }),
        async (body, mutations: Mutation[]) => {
          const mutated = mutations.reduce(apply, scheme.sign(body));
          expect(await viaWeb(webVerifier, mutated)).toEqual(await viaNode(nodeVerifier, mutated));
        },
      ),
      { seed: 31, numRuns: 150 },
    );
  });

  test("refuses the sync verify with SYNC_CRYPTO_UNAVAILABLE before reading the request", async () => {
    expect(await outcome(() => webVerifier.verify({ body: BODY, headers: {} }, NOW))).toEqual({
      ok: false,
      code: "SYNC_CRYPTO_UNAVAILABLE",
    });
  });
});

describe("Web Crypto path: Standard Webhooks", () => {
  test("reports the key that matched during a rotation, for v1 and v1a alike", async () => {
    const old = node.generateSecret();
    const other = node.generateKeyPair();
    const verifier = web.createVerifier([old, other.publicKey, SECRET, PAIR.publicKey]);
    expect((await verifier.verifyAsync(standardRequest(SECRET), NOW)).keyIndex).toBe(2);
    const ed = await verifier.verifyAsync(standardRequest(PAIR.privateKey), NOW);
    expect({ keyIndex: ed.keyIndex, version: ed.version }).toEqual({ keyIndex: 3, version: "v1a" });
  });

  test("checks every signature against every key, even after a match", async () => {
    const subtle = globalThis.crypto.subtle;
    const verify = vi.spyOn(subtle, "verify");
    const sign = vi.spyOn(subtle, "sign");
    const other = node.generateKeyPair();
    const verifier = web.createVerifier([PAIR.publicKey, other.publicKey, SECRET, node.generateSecret()]);
    // Three v1a signatures (the first one matches the first key) and two v1 ones.
    const request = standardRequest([PAIR.privateKey, node.generateKeyPair().privateKey, other.privateKey]);
    const v1 = standardRequest([SECRET, node.generateSecret()]).headers["webhook-signature"];
    request.headers["webhook-signature"] += ` ${v1}`;
    try {
      expect((await verifier.verifyAsync(request, NOW)).keyIndex).toBe(0);
      expect(verify).toHaveBeenCalledTimes(2 * 3);
      expect(sign).toHaveBeenCalledTimes(2);
    } finally {
      verify.mockRestore();
      sign.mockRestore();
    }
  });

  test("the first configured key wins when the sender signed with several", async () => {
    const request = standardRequest([PAIR.privateKey, SECRET]);
    const result = await web.createVerifier([SECRET, PAIR.publicKey]).verifyAsync(request, NOW);
    expect({ keyIndex: result.keyIndex, version: result.version }).toEqual({ keyIndex: 0, version: "v1" });
  });

  test("refuses a stale timestamp with TIMESTAMP_OUT_OF_WINDOW", async () => {
    const request = standardRequest(SECRET, BODY, T - 301);
    expect(await viaWeb(web.createVerifier(SECRET), request)).toEqual({
      ok: false,
      code: "TIMESTAMP_OUT_OF_WINDOW",
    });
  });

  test("refuses a header without a supported signature with MALFORMED_HEADER", async () => {
    const request = {
      body: BODY,
      headers: { ...standardRequest(SECRET).headers, "webhook-signature": "v2,abc" },
    };
    expect(await viaWeb(web.createVerifier(SECRET), request)).toEqual({
      ok: false,
      code: "MALFORMED_HEADER",
    });
  });

  test("verifies with a 32-byte whsk_ private key in place of the public key", async () => {
    const result = await web
      .createVerifier(PAIR.privateKey)
      .verifyAsync(standardRequest(PAIR.privateKey), NOW);
    expect(result.version).toBe("v1a");
  });

  test("verifies with the 64-byte whsk_ form (seed and public key)", async () => {
    const long = `whsk_${Buffer.concat([bytesOf(PAIR.privateKey), bytesOf(PAIR.publicKey)]).toString("base64")}`;
    const result = await web.createVerifier(long).verifyAsync(standardRequest(PAIR.privateKey), NOW);
    expect(result.keyIndex).toBe(0);
  });

  test("refuses a 64-byte whsk_ key whose halves disagree, on its first verification", async () => {
    const other = node.generateKeyPair();
    const spliced = `whsk_${Buffer.concat([bytesOf(PAIR.privateKey), bytesOf(other.publicKey)]).toString("base64")}`;
    // Deriving a public key is asynchronous in Web Crypto, so createVerifier cannot check it yet.
    const verifier = web.createVerifier(spliced);
    await expect(verifier.verifyAsync(standardRequest(PAIR.privateKey), NOW)).rejects.toMatchObject({
      code: "INVALID_KEY",
      message: expect.stringMatching(/last 32 bytes are not the public key of its seed/),
    });
  });

  test("keeps the key errors of createVerifier, thrown when the keys are decoded", () => {
    expect(() => web.createVerifier("whsec_AAEC")).toThrow(expect.objectContaining({ code: "INVALID_KEY" }));
    expect(() => web.createVerifier("whpk_AAEC")).toThrow(/decodes to 3 bytes/);
  });

  test("the one-shot verifyAsync resolves like verify and rejects with the same codes", async () => {
    const { headers } = standardRequest(SECRET);
    const options = { keys: SECRET, now: new Date(NOW) };
    expect(await web.verifyAsync(BODY, headers, options)).toEqual(node.verify(BODY, headers, options));
    await expect(web.verifyAsync("tampered", headers, options)).rejects.toMatchObject({
      code: "SIGNATURE_INVALID",
    });
    await expect(web.verifyAsync(BODY, headers, { keys: "whsec_x" })).rejects.toMatchObject({
      code: "INVALID_KEY",
    });
  });

  test("on Node, verifyAsync is the sync path: same result, same codes", async () => {
    const request = standardRequest(SECRET);
    const verifier = node.createVerifier(SECRET);
    expect(await verifier.verifyAsync(request, NOW)).toEqual(verifier.verify(request, NOW));
    await expect(verifier.verifyAsync(request, NOW + 301_000)).rejects.toMatchObject({
      code: "TIMESTAMP_OUT_OF_WINDOW",
    });
  });
});

describe("Web Crypto path: providers' own formats", () => {
  test("twilio checks a JSON body against its bodySHA256 parameter", async () => {
    const body = Buffer.from('{"Body":"hi"}');
    const url = `https://hooks.example.com/json?bodySHA256=${createHash("sha256").update(body).digest("hex")}`;
    const signature = createHmac("sha1", PROVIDER_SECRET).update(url).digest("base64");
    const request = { body, headers: { "x-twilio-signature": signature }, url };
    const verifier = web.twilio({ authToken: PROVIDER_SECRET });
    expect((await verifier.verifyAsync!(request, NOW)).keyIndex).toBe(0);
    expect(await viaWeb(verifier, { ...request, body: Buffer.from('{"Body":"ho"}') })).toEqual({
      ok: false,
      code: "SIGNATURE_INVALID",
    });
  });

  test("twilio verifies a SharedKey signature with HMAC-SHA256 and reports which secret", async () => {
    const params = { Body: "hi" };
    const data = `${TWILIO_URL}Bodyhi`;
    const signature = createHmac("sha256", "shared-2").update(data).digest("base64");
    const headers = {
      ...FORM,
      "x-twilio-signature": signature,
      "x-twilio-webhooks-signature-settings": "key=KS1,algorithm=HMAC_SHA256",
    };
    const request = { body: Buffer.from(new URLSearchParams(params).toString()), headers, url: TWILIO_URL };
    const verifier = web.twilio({ authToken: PROVIDER_SECRET, sharedKeySecrets: ["shared-1", "shared-2"] });
    expect((await verifier.verifyAsync!(request, NOW)).keyIndex).toBe(1);
  });

  test("stripe reports which secret matched during a rotation", async () => {
    const request = {
      body: BODY,
      headers: node.stripe.sign({ secret: PROVIDER_SECRET, timestamp: T, body: BODY }),
    };
    const verifier = web.stripe({ secrets: ["whsec_old", PROVIDER_SECRET] });
    expect((await verifier.verifyAsync!(request, NOW)).keyIndex).toBe(1);
  });

  test("slack refuses a stale timestamp with TIMESTAMP_OUT_OF_WINDOW", async () => {
    const headers = node.slack.sign({ signingSecret: PROVIDER_SECRET, timestamp: T - 600, body: BODY });
    expect(await viaWeb(web.slack({ signingSecret: PROVIDER_SECRET }), { body: BODY, headers })).toEqual({
      ok: false,
      code: "TIMESTAMP_OUT_OF_WINDOW",
    });
  });
});

// Published examples and other libraries' signatures, as test/vectors.test.ts and test/interop-*
// check them on Node, verified here through the Web Crypto path.
describe("Web Crypto path: published vectors and other libraries' signatures", () => {
  const vector = <V>(name: string): V =>
    JSON.parse(readFileSync(new URL(`./vectors/${name}.json`, import.meta.url), "utf8")) as V;

  test("the Standard Webhooks specification example", async () => {
    const v = vector<{ secret: string; id: string; timestamp: number; body: string; signature: string }>(
      "standard-webhooks",
    );
    const headers = {
      "webhook-id": v.id,
      "webhook-timestamp": String(v.timestamp),
      "webhook-signature": v.signature,
    };
    const options = { keys: v.secret, now: new Date(v.timestamp * 1000) };
    expect((await web.verifyAsync(v.body, headers, options)).id).toBe(v.id);
    await expect(
      web.verifyAsync(v.body.replace("2432232314", "2432232315"), headers, options),
    ).rejects.toMatchObject({
      code: "SIGNATURE_INVALID",
    });
  });

  test("the GitHub and Slack documentation examples", async () => {
    const gh = vector<{ secret: string; body: string; signature: string }>("github");
    const ghRequest = { body: Buffer.from(gh.body), headers: { "X-Hub-Signature-256": gh.signature } };
    expect((await web.github({ secret: gh.secret }).verifyAsync(ghRequest, 0)).keyIndex).toBe(0);
    const sl = vector<{ signingSecret: string; timestamp: number; body: string; signature: string }>("slack");
    const slHeaders = {
      "X-Slack-Signature": sl.signature,
      "X-Slack-Request-Timestamp": String(sl.timestamp),
    };
    const slVerifier = web.slack({ signingSecret: sl.signingSecret });
    expect(
      (await slVerifier.verifyAsync({ body: Buffer.from(sl.body), headers: slHeaders }, sl.timestamp * 1000))
        .keyIndex,
    ).toBe(0);
  });

  test("standardwebhooks@1.1.1 (v1), and node:crypto's own Ed25519 (v1a)", async () => {
    const timestamp = new Date();
    const body = '{"type":"invoice.paid","data":{"name":"Zoë"}}';
    const headers = {
      "webhook-id": "msg_theirs",
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": new Webhook(SECRET).sign("msg_theirs", timestamp, body),
    };
    expect((await web.verifyAsync(body, headers, { keys: SECRET })).id).toBe("msg_theirs");
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const whpk = `whpk_${Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url").toString("base64")}`;
    const content = Buffer.from(`msg_theirs.${headers["webhook-timestamp"]}.${body}`);
    const v1a = {
      ...headers,
      "webhook-signature": `v1a,${cryptoSign(null, content, privateKey).toString("base64")}`,
    };
    expect((await web.verifyAsync(body, v1a, { keys: whpk })).version).toBe("v1a");
  });

  test("the Stripe SDK, @octokit/webhooks-methods and the Twilio SDK", async () => {
    const payload = JSON.stringify({ id: "evt_1", object: "event" });
    const header = new Stripe("sk_test_not_a_key").webhooks.generateTestHeaderString({
      payload,
      secret: "whsec_interop",
      timestamp: T,
    });
    const stripeRequest = { body: Buffer.from(payload), headers: { "stripe-signature": header } };
    expect((await web.stripe({ secret: "whsec_interop" }).verifyAsync(stripeRequest, NOW)).keyIndex).toBe(0);

    const ghRequest = {
      body: Buffer.from(payload),
      headers: { "x-hub-signature-256": await octokitSign("s", payload) },
    };
    expect((await web.github({ secret: "s" }).verifyAsync(ghRequest, NOW)).keyIndex).toBe(0);

    const params = { Body: "hi", From: "+15550100" };
    const signature = twilioSdk.getExpectedTwilioSignature(PROVIDER_SECRET, TWILIO_URL, params);
    const twilioRequest = {
      body: Buffer.from(new URLSearchParams(params).toString()),
      headers: { ...FORM, "x-twilio-signature": signature },
      url: TWILIO_URL,
    };
    expect((await web.twilio({ authToken: PROVIDER_SECRET }).verifyAsync(twilioRequest, NOW)).keyIndex).toBe(
      0,
    );
  });
});

describe("Web Crypto path: synchronous APIs", () => {
  test.each([
    ["verify()", () => web.verify(BODY, standardRequest(SECRET).headers, { keys: SECRET })],
    ["createVerifier().verify()", () => web.createVerifier(SECRET).verify(standardRequest(SECRET), NOW)],
    ["createSigner()", () => web.createSigner(SECRET)],
    ["sign()", () => web.sign({ id: "msg_1", timestamp: T, body: BODY, keys: SECRET })],
    ["generateKeyPair()", () => web.generateKeyPair()],
    ["publicKeyFromPrivate()", () => web.publicKeyFromPrivate(PAIR.privateKey)],
    ["stripe.sign()", () => web.stripe.sign({ secret: PROVIDER_SECRET, timestamp: T, body: BODY })],
  ])("%s throws SYNC_CRYPTO_UNAVAILABLE, naming itself and verifyAsync", (api, call) => {
    const error = captureError(call);
    expect(error).toBeInstanceOf(web.SyncCryptoUnavailableError);
    expect(error).toMatchObject({ code: "SYNC_CRYPTO_UNAVAILABLE" });
    expect((error as Error).message).toContain(api);
    expect((error as Error).message).toMatch(/verifyAsync\(\)/);
  });

  test("generateSecret and constantTimeEqual need no node:crypto", () => {
    expect(web.generateSecret()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(web.constantTimeEqual("abc", new Uint8Array([97, 98, 99]))).toBe(true);
    expect(web.constantTimeEqual("abc", "abd")).toBe(false);
    expect(web.constantTimeEqual("abc", "abcd")).toBe(false);
    expect(web.constantTimeEqual("", "")).toBe(true);
  });
});

describe("Web Crypto path: the receiving gate", () => {
  afterEach(() => vi.restoreAllMocks());

  test("verifies through verifyAsync and imports each key once, not per request", async () => {
    const importKey = vi.spyOn(globalThis.crypto.subtle, "importKey");
    const receiver = webInbound.Receiver({
      sources: { billing: { verify: [SECRET, PAIR.publicKey] } },
      clock: { now: () => NOW },
    });
    for (const keys of [SECRET, PAIR.privateKey, SECRET, PAIR.privateKey]) {
      const { body, headers } = standardRequest(keys);
      expect((await receiver.handle("billing", { body, headers }, () => undefined)).status).toBe(200);
    }
    expect(importKey).toHaveBeenCalledTimes(2);
  });

  test("answers a tampered body 401 SIGNATURE_INVALID, as on Node", async () => {
    const receiver = webInbound.Receiver({
      sources: { billing: { verify: SECRET } },
      clock: { now: () => NOW },
    });
    const { headers } = standardRequest(SECRET);
    const response = await receiver.handle("billing", { body: Buffer.from("{}"), headers }, () => undefined);
    expect({ status: response.status, code: response.headers["x-postel-error"] }).toEqual({
      status: 401,
      code: "SIGNATURE_INVALID",
    });
  });

  test("still runs a custom verifier that has only the sync verify", async () => {
    const custom: node.Verifier = {
      scheme: "custom",
      verify: () => ({ scheme: "custom", id: "evt_1", timestamp: undefined, keyIndex: 0 }),
    };
    const receiver = webInbound.Receiver({
      sources: { custom: { verify: custom } },
      clock: { now: () => NOW },
    });
    const event = await receiver.verify("custom", { body: Buffer.from("{}"), headers: {} });
    expect({ scheme: event.scheme, id: event.id }).toEqual({ scheme: "custom", id: "evt_1" });
  });
});

function bytesOf(key: string): Buffer {
  return Buffer.from(key.slice(5), "base64");
}

function captureError(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}
