import type { IncomingHttpHeaders } from "node:http";
import { describe, expect, test } from "vitest";
import { generateKeyPair } from "./ed25519-keys.js";
import { InvalidArgumentError, type WebhookVerificationError } from "./errors.js";
import { generateSecret } from "./secret.js";
import { sign } from "./sign.js";
import { createVerifier, verify } from "./verify.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const T = 1614265330;
const NOW = T * 1000;
const BODY = '{"test": 2432232314}';
const GOOD = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

function headersFor(body: Uint8Array | string, keys: string | string[] = SECRET, timestamp = T) {
  return sign({ id: ID, timestamp, body, keys });
}

function rejection(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (error) {
    return error as WebhookVerificationError;
  }
  throw new Error("expected verification to fail");
}

describe("verify: signatures", () => {
  test("accepts the Standard Webhooks example and reports id, timestamp, version and key", () => {
    const headers = { "webhook-id": ID, "webhook-timestamp": String(T), "webhook-signature": GOOD };
    expect(verify(BODY, headers, { keys: SECRET, now: new Date(NOW) })).toEqual({
      scheme: "standard-webhooks",
      id: ID,
      timestamp: new Date(NOW),
      version: "v1",
      keyIndex: 0,
    });
  });

  test("accepts a v1a Ed25519 signature with the whpk_ public key", () => {
    const { privateKey, publicKey } = generateKeyPair();
    const result = verify(BODY, headersFor(BODY, privateKey), { keys: publicKey, now: () => NOW });
    expect(result.version).toBe("v1a");
  });

  test("accepts the whsk_ private key in place of the public key", () => {
    const { privateKey } = generateKeyPair();
    expect(verify(BODY, headersFor(BODY, privateKey), { keys: privateKey, now: () => NOW }).version).toBe(
      "v1a",
    );
  });

  test("rejects a v1a signature made by a different Ed25519 key", () => {
    const headers = headersFor(BODY, generateKeyPair().privateKey);
    const error = rejection(() =>
      verify(BODY, headers, { keys: generateKeyPair().publicKey, now: () => NOW }),
    );
    expect(error.code).toBe("SIGNATURE_INVALID");
  });

  test("rejects a body re-serialised by JSON.parse/stringify", () => {
    const headers = headersFor(BODY);
    const reserialised = JSON.stringify(JSON.parse(BODY));
    expect(reserialised).not.toBe(BODY);
    expect(rejection(() => verify(reserialised, headers, { keys: SECRET, now: () => NOW })).code).toBe(
      "SIGNATURE_INVALID",
    );
  });

  test("verifies a body with a UTF-8 BOM over its bytes, and rejects it once the BOM is stripped", () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(BODY)]);
    const headers = headersFor(body);
    expect(verify(body, headers, { keys: SECRET, now: () => NOW }).keyIndex).toBe(0);
    const decoded = new TextDecoder().decode(body); // TextDecoder drops the BOM
    expect(rejection(() => verify(decoded, headers, { keys: SECRET, now: () => NOW })).code).toBe(
      "SIGNATURE_INVALID",
    );
  });

  test("verifies a body with bytes that are not UTF-8, and rejects it after a decode/encode round trip", () => {
    const body = new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]);
    const headers = headersFor(body);
    expect(verify(body, headers, { keys: SECRET, now: () => NOW }).id).toBe(ID);
    const roundTripped = Buffer.from(body).toString("utf8");
    expect(rejection(() => verify(roundTripped, headers, { keys: SECRET, now: () => NOW })).code).toBe(
      "SIGNATURE_INVALID",
    );
  });

  test.each([
    ["a length-mismatched signature", "v1,AAAA"],
    ["a garbage signature", "v1,!!!not-base64!!!"],
    ["an empty signature", "v1,"],
    ["the right signature with trailing junk", `${GOOD}xyz`],
    ["a garbage v1a signature", "v1a,@@@@"],
    ["a v1a signature of the wrong length", `v1a,${Buffer.alloc(63).toString("base64")}`],
  ])("rejects %s with SIGNATURE_INVALID", (_, signature) => {
    const headers = { "webhook-id": ID, "webhook-timestamp": String(T), "webhook-signature": signature };
    const keys = [SECRET, generateKeyPair().publicKey];
    const error = rejection(() => verify(BODY, headers, { keys, now: () => NOW }));
    expect(error.code).toBe("SIGNATURE_INVALID");
    expect(error.header).toBe("webhook-signature");
  });

  test("skips an unknown version and verifies the v1 signature beside it", () => {
    const headers = {
      "webhook-id": ID,
      "webhook-timestamp": String(T),
      "webhook-signature": `v2,abc ${GOOD}`,
    };
    expect(verify(BODY, headers, { keys: SECRET, now: () => NOW }).version).toBe("v1");
  });

  test("rejects a header with only unknown versions as MALFORMED_HEADER", () => {
    const headers = {
      "webhook-id": ID,
      "webhook-timestamp": String(T),
      "webhook-signature": "v2,abc nocomma",
    };
    const error = rejection(() => verify(BODY, headers, { keys: SECRET, now: () => NOW }));
    expect(error.code).toBe("MALFORMED_HEADER");
    expect(error.message).toContain("no signature of a supported version");
  });

  test("says a public key is missing when the header carries only v1a signatures", () => {
    const headers = headersFor(BODY, generateKeyPair().privateKey);
    expect(() => verify(BODY, headers, { keys: SECRET, now: () => NOW })).toThrow(/no whpk_ public key/);
  });
});

describe("verify: rotation", () => {
  const old = generateSecret();
  const current = generateSecret();

  test.each([
    [0, old],
    [1, current],
  ])("reports keyIndex %i for the key that signed", (index, signingKey) => {
    const result = verify(BODY, headersFor(BODY, signingKey), { keys: [old, current], now: () => NOW });
    expect(result.keyIndex).toBe(index);
  });

  test("verifies a message signed with both keys during the overlap and reports the first key", () => {
    const headers = headersFor(BODY, [current, old]);
    expect(verify(BODY, headers, { keys: [old, current], now: () => NOW }).keyIndex).toBe(0);
  });

  test("matches an Ed25519 key listed after a secret and reports its position", () => {
    const pair = generateKeyPair();
    const result = verify(BODY, headersFor(BODY, pair.privateKey), {
      keys: [old, pair.publicKey],
      now: () => NOW,
    });
    expect(result).toMatchObject({ keyIndex: 1, version: "v1a" });
  });
});

describe("verify: headers", () => {
  test("verifies when a proxy repeated webhook-signature (array value in IncomingHttpHeaders)", () => {
    const headers: IncomingHttpHeaders = {
      "webhook-id": ID,
      "webhook-timestamp": String(T),
      "webhook-signature": ["v1,c3RhbGUgc2lnbmF0dXJlIGZyb20gYSBwcm94eQ==", GOOD],
    };
    expect(verify(BODY, headers, { keys: SECRET, now: () => NOW }).keyIndex).toBe(0);
  });

  test("verifies when fetch Headers joined a repeated webhook-signature with a comma", () => {
    const headers = new Headers({ "webhook-id": ID, "webhook-timestamp": String(T) });
    headers.append("webhook-signature", GOOD);
    headers.append("webhook-signature", "v1,b3RoZXI=");
    expect(headers.get("webhook-signature")).toBe(`${GOOD}, v1,b3RoZXI=`);
    expect(verify(BODY, headers, { keys: SECRET, now: () => NOW }).id).toBe(ID);
  });

  test("rejects a webhook-id repeated with different values", () => {
    const headers = { ...headersFor(BODY), "webhook-id": [ID, "msg_other"] };
    expect(rejection(() => verify(BODY, headers, { keys: SECRET, now: () => NOW })).code).toBe(
      "MALFORMED_HEADER",
    );
  });

  test("reads headers whatever their capitalisation", () => {
    const headers = { "Webhook-Id": ID, "WEBHOOK-TIMESTAMP": String(T), "Webhook-Signature": GOOD };
    expect(verify(BODY, headers, { keys: SECRET, now: () => NOW }).id).toBe(ID);
  });

  test.each(["webhook-id", "webhook-timestamp", "webhook-signature"])(
    "rejects a request without %s",
    (name) => {
      const headers: Record<string, string> = { ...headersFor(BODY) };
      delete headers[name];
      const error = rejection(() => verify(BODY, headers, { keys: SECRET, now: () => NOW }));
      expect(error).toMatchObject({ code: "MISSING_HEADER", header: name });
    },
  );
});

describe("verify: how many signatures a request may carry", () => {
  const { privateKey, publicKey } = generateKeyPair();
  const valid = {
    v1: headersFor(BODY)["webhook-signature"],
    v1a: headersFor(BODY, privateKey)["webhook-signature"],
  };
  const keys = { v1: SECRET, v1a: publicKey };
  const decoys = (version: "v1" | "v1a", count: number) =>
    Array.from(
      { length: count },
      (_, i) => `${version},${Buffer.alloc(version === "v1" ? 32 : 64, i).toString("base64")}`,
    );
  const withSignatures = (signatures: string[]) => ({
    ...headersFor(BODY),
    "webhook-signature": signatures.join(" "),
  });

  test.each(["v1", "v1a"] as const)(
    "refuses 17 %s signatures as MALFORMED_HEADER, naming the cap, even when the first one is valid",
    (version) => {
      const headers = withSignatures([valid[version], ...decoys(version, 16)]);
      const error = rejection(() => verify(BODY, headers, { keys: keys[version], now: () => NOW }));
      expect(error).toMatchObject({ code: "MALFORMED_HEADER", header: "webhook-signature" });
      expect(error.message).toContain(`more than 16 ${version} signatures`);
      expect(error.message).toMatch(/checked against every key before the sender is authenticated/);
    },
  );

  test.each(["v1", "v1a"] as const)("verifies 16 %s signatures with the valid one last", (version) => {
    const headers = withSignatures([...decoys(version, 15), valid[version]]);
    expect(verify(BODY, headers, { keys: keys[version], now: () => NOW }).version).toBe(version);
  });

  test("caps each version on its own: 16 v1 and 16 v1a signatures together still verify", () => {
    const headers = withSignatures([...decoys("v1", 16), ...decoys("v1a", 15), valid.v1a]);
    expect(verify(BODY, headers, { keys: [SECRET, publicKey], now: () => NOW }).version).toBe("v1a");
  });

  test("counts signatures split over repeated webhook-signature headers together", () => {
    const headers = { ...headersFor(BODY), "webhook-signature": [...decoys("v1a", 9), ...decoys("v1a", 8)] };
    const error = rejection(() => verify(BODY, headers, { keys: publicKey, now: () => NOW }));
    expect(error.code).toBe("MALFORMED_HEADER");
  });
});

describe("verify: timestamps", () => {
  const at = (timestamp: string) => ({ ...headersFor(BODY), "webhook-timestamp": timestamp });

  test("rejects a millisecond timestamp, saying seconds, not milliseconds", () => {
    const error = rejection(() => verify(BODY, at(String(NOW)), { keys: SECRET, now: () => NOW }));
    expect(error.code).toBe("MALFORMED_HEADER");
    expect(error.message).toContain("seconds, not milliseconds");
  });

  test.each([
    "+1614265330",
    "-1614265330",
    "1614265330.0",
    "1.6e9",
    " 1614265330",
    "01614265330",
    "abc",
    "0x60",
  ])("rejects the timestamp %j as MALFORMED_HEADER", (timestamp) => {
    const error = rejection(() => verify(BODY, at(timestamp), { keys: SECRET, now: () => NOW }));
    expect(error).toMatchObject({ code: "MALFORMED_HEADER", header: "webhook-timestamp" });
  });

  test.each([
    ["past", -300],
    ["future", 300],
  ])("accepts a timestamp exactly 5 minutes in the %s", (_, offsetSeconds) => {
    const headers = headersFor(BODY, SECRET, T + offsetSeconds);
    expect(verify(BODY, headers, { keys: SECRET, now: () => NOW }).timestamp).toEqual(
      new Date((T + offsetSeconds) * 1000),
    );
  });

  test.each([
    ["past", -301, "in the past"],
    ["future", 301, "in the future"],
  ])("rejects a timestamp 1 second beyond 5 minutes in the %s", (_, offsetSeconds, direction) => {
    const headers = headersFor(BODY, SECRET, T + offsetSeconds);
    const error = rejection(() => verify(BODY, headers, { keys: SECRET, now: () => NOW }));
    expect(error.code).toBe("TIMESTAMP_OUT_OF_WINDOW");
    expect(error.message).toContain(direction);
  });

  test("honours a custom tolerance in milliseconds", () => {
    const headers = headersFor(BODY, SECRET, T - 10);
    const verifier = createVerifier(SECRET, { tolerance: 10_000 });
    expect(verifier.verify({ body: Buffer.from(BODY), headers }, NOW).keyIndex).toBe(0);
    expect(() => verifier.verify({ body: Buffer.from(BODY), headers }, NOW + 1000)).toThrow(
      expect.objectContaining({ code: "TIMESTAMP_OUT_OF_WINDOW" }),
    );
  });

  test("checks the window against the now the gate passes in", () => {
    const verifier = createVerifier(SECRET);
    const request = { body: Buffer.from(BODY), headers: headersFor(BODY) };
    expect(verifier.verify(request, NOW).timestamp).toEqual(new Date(NOW));
    expect(() => verifier.verify(request, NOW + 3_600_000)).toThrow(/in the past/);
  });

  test.each([Number.NaN, -1])("refuses the tolerance %d, which would disable the window", (tolerance) => {
    expect(() => createVerifier(SECRET, { tolerance })).toThrow(InvalidArgumentError);
  });
});

describe("verify: error messages", () => {
  test("never contain the secret or the signature", () => {
    const secret = generateSecret();
    const forged = sign({ id: ID, timestamp: T, body: BODY, keys: generateSecret() });
    const cases = [
      forged,
      { ...forged, "webhook-signature": "v2,abc" },
      { ...forged, "webhook-timestamp": "99" },
      { ...forged, "webhook-timestamp": "1614265330000" },
      { ...forged, "webhook-id": [ID, "x"] },
    ];
    for (const headers of cases) {
      const error = rejection(() => verify(BODY, headers, { keys: secret, now: () => NOW }));
      for (const secretPart of [secret, secret.slice(6), secret.slice(6, 20)]) {
        expect(error.message).not.toContain(secretPart);
      }
      expect(error.message).not.toContain(forged["webhook-signature"].slice(3, 20));
    }
  });
});
