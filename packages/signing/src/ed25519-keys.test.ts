import { createPrivateKey, createPublicKey, sign as cryptoSign, verify as cryptoVerify } from "node:crypto";
import { describe, expect, test } from "vitest";
import { decodePrivateKey, decodePublicKey, generateKeyPair, publicKeyFromPrivate } from "./ed25519-keys.js";
import { InvalidKeyError } from "./errors.js";

const bytesOf = (key: string) => Buffer.from(key.slice(5), "base64");
// node:crypto's own import of the key strings, independent of the package's decoding.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const nodePrivateKey = (key: string) =>
  createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, bytesOf(key)]), format: "der", type: "pkcs8" });
const nodePublicKey = (key: string) =>
  createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: bytesOf(key).toString("base64url") },
    format: "jwk",
  });

describe("generateKeyPair", () => {
  test("returns a 32-byte whsk_ seed and its 32-byte whpk_ public key", () => {
    const { privateKey, publicKey } = generateKeyPair();
    expect(privateKey.startsWith("whsk_")).toBe(true);
    expect(publicKey.startsWith("whpk_")).toBe(true);
    expect(bytesOf(privateKey)).toHaveLength(32);
    expect(bytesOf(publicKey)).toHaveLength(32);
  });

  test("produces keys that sign and verify together", () => {
    const { privateKey, publicKey } = generateKeyPair();
    const signature = cryptoSign(null, Buffer.from("content"), nodePrivateKey(privateKey));
    expect(cryptoVerify(null, Buffer.from("content"), nodePublicKey(publicKey), signature)).toBe(true);
  });
});

describe("publicKeyFromPrivate", () => {
  test("derives the public key generated with the pair", () => {
    const pair = generateKeyPair();
    expect(publicKeyFromPrivate(pair.privateKey)).toBe(pair.publicKey);
  });

  test("accepts the 64-byte seed+public form and derives the same public key", () => {
    const pair = generateKeyPair();
    const long = `whsk_${Buffer.concat([bytesOf(pair.privateKey), bytesOf(pair.publicKey)]).toString("base64")}`;
    expect(publicKeyFromPrivate(long)).toBe(pair.publicKey);
  });
});

describe("malformed keys", () => {
  const pair = generateKeyPair();
  const other = generateKeyPair();
  const spliced = `whsk_${Buffer.concat([bytesOf(pair.privateKey), bytesOf(other.publicKey)]).toString("base64")}`;

  test.each([
    ["a whsec_ prefix", `whsec_${pair.privateKey.slice(5)}`, /must start with "whsk_"/],
    ["invalid base64", "whsk_%%%%", /standard base64/],
    ["31 bytes", `whsk_${Buffer.alloc(31, 1).toString("base64")}`, /31 bytes/],
    ["a public half that does not match the seed", spliced, /not the public key of its seed/],
  ])("rejects a private key with %s", (_, key, message) => {
    expect(() => decodePrivateKey(key)).toThrow(InvalidKeyError);
    expect(() => decodePrivateKey(key)).toThrow(message);
  });

  test("rejects a public key of the wrong length or prefix", () => {
    expect(() => decodePublicKey(`whpk_${Buffer.alloc(33).toString("base64")}`)).toThrow(/33 bytes/);
    expect(() => decodePublicKey(pair.privateKey)).toThrow(/must start with "whpk_"/);
  });

  test("never echoes the key in the message", () => {
    try {
      decodePrivateKey(spliced);
    } catch (error) {
      expect((error as Error).message).not.toContain(spliced.slice(5, 20));
    }
    expect.assertions(1);
  });
});
