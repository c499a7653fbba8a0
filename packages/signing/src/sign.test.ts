import { createHmac, createPublicKey, verify as cryptoVerify } from "node:crypto";
import { describe, expect, test } from "vitest";
import { generateKeyPair } from "./ed25519-keys.js";
import { InvalidArgumentError, InvalidKeyError } from "./errors.js";
import { generateSecret } from "./secret.js";
import { createSigner, sign } from "./sign.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const BODY = '{"test": 2432232314}';

describe("sign", () => {
  test("returns exactly the three Standard Webhooks headers", () => {
    const headers = sign({ id: ID, timestamp: 1614265330, body: BODY, keys: SECRET });
    expect(headers).toEqual({
      "webhook-id": ID,
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
  });

  test("floors a Date to whole seconds", () => {
    const headers = sign({ id: ID, timestamp: new Date(1614265330_999), body: BODY, keys: SECRET });
    expect(headers["webhook-timestamp"]).toBe("1614265330");
  });

  test("signs a string body as its UTF-8 bytes", () => {
    const text = '{"name":"Zoë 🚀"}';
    const fromString = sign({ id: ID, timestamp: 1, body: text, keys: SECRET });
    const fromBytes = sign({ id: ID, timestamp: 1, body: new TextEncoder().encode(text), keys: SECRET });
    expect(fromString).toEqual(fromBytes);
  });

  test("signs with every key, space-separated in key order, v1 for secrets and v1a for whsk_ keys", () => {
    const pair = generateKeyPair();
    const other = generateSecret();
    const signature = sign({
      id: ID,
      timestamp: 1614265330,
      body: BODY,
      keys: [SECRET, pair.privateKey, other],
    })["webhook-signature"];
    const [first, second, third] = signature.split(" ");
    expect(first).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    expect(second).toMatch(/^v1a,/);
    const content = Buffer.from(`${ID}.1614265330.${BODY}`);
    const ed = Buffer.from(second!.slice(4), "base64");
    const x = Buffer.from(pair.publicKey.slice(5), "base64").toString("base64url");
    const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
    expect(cryptoVerify(null, content, publicKey, ed)).toBe(true);
    const hmac = createHmac("sha256", Buffer.from(other.slice(6), "base64"))
      .update(content)
      .digest("base64");
    expect(third).toBe(`v1,${hmac}`);
  });

  test("signs the body bytes as they are, including non-UTF-8 bytes", () => {
    const body = new Uint8Array([0xff, 0xfe, 0x00, 0x41]);
    const signature = sign({ id: ID, timestamp: 5, body, keys: SECRET })["webhook-signature"];
    const expected = createHmac("sha256", Buffer.from("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "base64"))
      .update(Buffer.concat([Buffer.from(`${ID}.5.`), body]))
      .digest("base64");
    expect(signature).toBe(`v1,${expected}`);
  });

  test.each([
    ["milliseconds", 1614265330000, /seconds, not milliseconds/],
    ["a fraction", 1614265330.5, /integer number of seconds/],
    ["a negative number", -1, /non-negative/],
    ["an invalid Date", new Date(Number.NaN), /integer number of seconds/],
  ])("refuses a timestamp in %s", (_, timestamp, message) => {
    const attempt = () => sign({ id: ID, timestamp, body: BODY, keys: SECRET });
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(message);
  });

  test.each([[""], ["msg 1"], ["msg\r\nx-injected: 1"]])("refuses the message id %j", (id) => {
    expect(() => sign({ id, timestamp: 1, body: BODY, keys: SECRET })).toThrow(InvalidArgumentError);
  });

  test("refuses a public key, which cannot sign", () => {
    expect(() => createSigner(generateKeyPair().publicKey)).toThrow(
      /whpk_ public key, which can only verify/,
    );
  });

  test("refuses an empty key list", () => {
    expect(() => createSigner([])).toThrow(InvalidKeyError);
  });
});

describe("createSigner", () => {
  test("decodes keys once and then signs like sign()", () => {
    const signer = createSigner([SECRET]);
    const body = new TextEncoder().encode(BODY);
    expect(signer.sign(ID, 1614265330, body)).toEqual(
      sign({ id: ID, timestamp: 1614265330, body, keys: SECRET }),
    );
  });

  test("names the bad key by position when a list is malformed", () => {
    expect(() => createSigner([SECRET, "whsec_!!"])).toThrow(/keys\[1\]/);
  });
});
