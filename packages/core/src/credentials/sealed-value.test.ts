import { createSecretKey, randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import { headerPlace, open, seal, sealedKeyId, secretPlace } from "./sealed-value.js";

const key = createSecretKey(randomBytes(32));
const other = createSecretKey(randomBytes(32));
const place = headerPlace("ep_1", "Authorization");

describe("sealed credential values", () => {
  test("round-trip any text, unicode included, in a printable stored form naming the key", () => {
    for (const plaintext of [
      "",
      "Bearer abc",
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "Zoë 🦊 ✓",
      "x".repeat(4096),
    ]) {
      const stored = seal(key, "k1", plaintext, place);
      expect(stored).toMatch(/^pcv1\.k1\.[A-Za-z0-9_-]+$/);
      expect(sealedKeyId(stored)).toBe("k1");
      expect(open(key, stored, place)).toBe(plaintext);
    }
  });

  test("a random IV per value: the same plaintext never seals to the same text", () => {
    expect(seal(key, "k1", "same", place)).not.toBe(seal(key, "k1", "same", place));
  });

  test("does not open under another key, another place, another key id, or altered", () => {
    const stored = seal(key, "k1", "Bearer abc", place);
    expect(open(other, stored, place)).toBeNull();
    expect(open(key, stored, headerPlace("ep_2", "Authorization"))).toBeNull();
    expect(open(key, stored, headerPlace("ep_1", "X-Other"))).toBeNull();
    expect(open(key, stored, secretPlace("ep_1", 0))).toBeNull();
    expect(open(key, stored.replace("pcv1.k1.", "pcv1.k2."), place)).toBeNull();
    const body = stored.slice("pcv1.k1.".length);
    // Not the last character: its low bits can be base64url padding, and flipping only those gives
    // the same bytes (a flaky test, not a forgery). Every bit of the one before it is data.
    for (const at of [0, 13, body.length - 2]) {
      const flipped = body.slice(0, at) + (body[at] === "A" ? "B" : "A") + body.slice(at + 1);
      expect(open(key, `pcv1.k1.${flipped}`, place)).toBeNull();
    }
    expect(open(key, "pcv1.k1.short", place)).toBeNull();
  });

  test("header places ignore the case of the name; secret places tell secrets apart by creation time", () => {
    expect(headerPlace("ep_1", "AUTHORIZATION")).toBe(headerPlace("ep_1", "authorization"));
    expect(secretPlace("ep_1", 1)).not.toBe(secretPlace("ep_1", 2));
  });

  test("values not in the sealed form are plain text (rows written before encryption)", () => {
    for (const plain of [
      "whsec_abc",
      "Bearer pcv1.k1.x",
      "pcv1.k1.tooshort",
      "pcv1..AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      "",
    ]) {
      expect(sealedKeyId(plain)).toBeNull();
    }
  });
});
