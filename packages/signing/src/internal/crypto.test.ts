import { describe, expect, test } from "vitest";
import type { CryptoModule } from "./crypto.js";
import * as nodeCrypto from "./crypto-node.js";
import * as webCrypto from "./crypto-web.js";

// Both variants must satisfy one contract: this assignment is the type test.
const variants: Record<"node" | "web", CryptoModule> = { node: nodeCrypto, web: webCrypto };
const bytes = (text: string) => new TextEncoder().encode(text);

describe.each(Object.entries(variants))("#crypto (%s)", (name, crypto) => {
  test("HMAC-SHA256 and HMAC-SHA1 match RFC 4231 / RFC 2202 test vectors, hex and base64", async () => {
    const key = crypto.hmacKey(bytes("Jefe"));
    const parts = ["what do ya want ", bytes("for nothing?")];
    expect(await crypto.hmac(key, "sha256", "hex", parts)).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    expect(await crypto.hmac(key, "sha1", "hex", parts)).toBe("effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
    expect(await crypto.hmac(key, "sha256", "base64", parts)).toBe(
      "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=",
    );
  });

  test("SHA-256 of the empty string", async () => {
    expect(await crypto.sha256Hex(new Uint8Array())).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
  });

  test("Ed25519 verifies RFC 8032 test 2 and refuses it once a byte changes", async () => {
    const publicKey = crypto.ed25519PublicKey(
      hex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"),
    );
    const signature = hex(
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    );
    expect(await crypto.ed25519Verify(publicKey, hex("72"), signature)).toBe(true);
    expect(await crypto.ed25519Verify(publicKey, hex("73"), signature)).toBe(false);
  });

  test("derives the public key of a seed, and refuses a claimed one that differs", async () => {
    const seed = hex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb");
    const publicKey = hex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c");
    const signature = hex(
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    );
    const derived = crypto.ed25519PublicKeyOf(
      crypto.ed25519PrivateKey(seed),
      publicKey,
      () => new Error("no"),
    );
    expect(await crypto.ed25519Verify(derived, hex("72"), signature)).toBe(true);
    const wrong = new Uint8Array(32);
    await expect(
      (async () => {
        const key = crypto.ed25519PublicKeyOf(
          crypto.ed25519PrivateKey(seed),
          wrong,
          () => new Error("mismatch"),
        );
        return crypto.ed25519Verify(key, hex("72"), signature);
      })(),
    ).rejects.toThrow("mismatch");
  });

  test("timingSafeEqual: equal bytes only; other lengths are unequal, not an error", () => {
    expect(crypto.timingSafeEqual(bytes("abc"), bytes("abc"))).toBe(true);
    expect(crypto.timingSafeEqual(bytes("abc"), bytes("abd"))).toBe(false);
    expect(crypto.timingSafeEqual(bytes("abc"), bytes("ab"))).toBe(false);
    expect(crypto.timingSafeEqual(bytes("ab"), bytes("ab\0"))).toBe(false);
    expect(crypto.timingSafeEqual(new Uint8Array(), new Uint8Array())).toBe(true);
  });

  test("utf8 encodes as TextEncoder does", () => {
    expect([...crypto.utf8("é€😀")]).toEqual([...bytes("é€😀")]);
  });

  test(`asyncPath takes the ${name === "node" ? "sync verify" : "Web Crypto path"}`, async () => {
    const path = crypto.asyncPath(
      () => "sync",
      async () => "web",
    );
    expect(await path({}, 0)).toBe(name === "node" ? "sync" : "web");
  });

  test(`the sync functions ${name === "node" ? "work" : "throw SYNC_CRYPTO_UNAVAILABLE"}`, () => {
    const key = crypto.hmacKey(bytes("Jefe"));
    const sync = () => crypto.hmacSync(key, "sha256", "hex", ["x"]);
    if (name === "node") {
      expect(sync()).toMatch(/^[0-9a-f]{64}$/);
      expect(() => crypto.requireSyncCrypto("api()")).not.toThrow();
    } else {
      expect(sync).toThrow(expect.objectContaining({ code: "SYNC_CRYPTO_UNAVAILABLE" }));
      expect(() => crypto.requireSyncCrypto("api()")).toThrow(/^api\(\) needs synchronous crypto/);
    }
  });
});

function hex(text: string): Uint8Array {
  return new Uint8Array(text.match(/../g)!.map((byte) => Number.parseInt(byte, 16)));
}
