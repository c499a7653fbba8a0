import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as cryptoSign,
  verify as cryptoVerify,
} from "node:crypto";
import { describe, expect, test } from "vitest";
import { generateKeyPair, publicKeyFromPrivate, sign, verify } from "../src/index.js";

// There is no reference v1a implementation on npm, so node:crypto stands in as the independent
// side. Keys cross the boundary as JWK, a different import path from our raw-bytes/DER decoding.
const body = Buffer.from('{"type":"user.created","data":{"id":1}}');
const id = "msg_ed25519";
const timestamp = 1_700_000_000;
const now = () => timestamp * 1000;
const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);

const b64 = (b64url: string) => Buffer.from(b64url, "base64url").toString("base64");
const jwkPublic = (whpk: string) =>
  createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(whpk.slice(5), "base64").toString("base64url") },
    format: "jwk",
  });

describe("interoperability with node:crypto Ed25519 (v1a)", () => {
  test("node:crypto verifies our v1a signature with the whpk_ key imported as JWK", () => {
    const pair = generateKeyPair();
    const signature = sign({ id, timestamp, body, keys: pair.privateKey })["webhook-signature"];
    expect(signature.startsWith("v1a,")).toBe(true);
    const bytes = Buffer.from(signature.slice(4), "base64");
    expect(cryptoVerify(null, content, jwkPublic(pair.publicKey), bytes)).toBe(true);
  });

  test("we verify a v1a signature node:crypto made over id.timestamp.body", () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const whpk = `whpk_${b64(publicKey.export({ format: "jwk" }).x!)}`;
    const signature = cryptoSign(null, content, privateKey).toString("base64");
    const headers = {
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": `v1a,${signature}`,
    };
    expect(verify(body, headers, { keys: whpk, now })).toMatchObject({ version: "v1a", keyIndex: 0 });
  });

  test("a node:crypto private key exported as seed signs through us and verifies with node's public key", () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const jwk = privateKey.export({ format: "jwk" });
    const whsk = `whsk_${b64(jwk.d!)}`;
    expect(publicKeyFromPrivate(whsk)).toBe(`whpk_${b64(jwk.x!)}`);
    const signature = sign({ id, timestamp, body, keys: whsk })["webhook-signature"];
    expect(cryptoVerify(null, content, publicKey, Buffer.from(signature.slice(4), "base64"))).toBe(true);
  });

  test("the 64-byte seed+public form signs identically to the 32-byte seed", () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    const jwk = privateKey.export({ format: "jwk" });
    const long = `whsk_${Buffer.concat([Buffer.from(jwk.d!, "base64url"), Buffer.from(jwk.x!, "base64url")]).toString("base64")}`;
    const short = `whsk_${b64(jwk.d!)}`;
    // Ed25519 is deterministic, so equal keys give equal signatures.
    expect(sign({ id, timestamp, body, keys: long })).toEqual(sign({ id, timestamp, body, keys: short }));
    expect(createPrivateKey({ key: jwk, format: "jwk" }).asymmetricKeyType).toBe("ed25519");
  });
});
