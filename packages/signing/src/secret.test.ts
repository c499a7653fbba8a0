import { describe, expect, test } from "vitest";
import { InvalidKeyError } from "./errors.js";
import { decodeSecret, generateSecret } from "./secret.js";

describe("generateSecret", () => {
  test("returns whsec_ followed by 32 random bytes in base64", () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(decodeSecret(secret)).toHaveLength(32);
  });

  test("never returns the same secret twice", () => {
    expect(new Set(Array.from({ length: 20 }, generateSecret)).size).toBe(20);
  });
});

describe("decodeSecret", () => {
  test("decodes a whsec_ secret and the same secret without its prefix to the same bytes", () => {
    const bare = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    expect(decodeSecret(`whsec_${bare}`)).toEqual(new Uint8Array(Buffer.from(bare, "base64")));
    expect(decodeSecret(bare)).toEqual(new Uint8Array(Buffer.from(bare, "base64")));
  });

  test("accepts base64 with and without padding", () => {
    // 25 bytes: base64 ends in one padding character.
    const bytes = new Uint8Array(Array.from({ length: 25 }, (_, i) => i));
    const padded = Buffer.from(bytes).toString("base64");
    expect(padded.endsWith("=")).toBe(true);
    expect(decodeSecret(`whsec_${padded}`)).toEqual(bytes);
    expect(decodeSecret(`whsec_${padded.replace(/=+$/, "")}`)).toEqual(bytes);
  });

  test.each([
    ["abc", "whsec_abc="],
    ["1 byte", "whsec_QQ=="],
    ["23 bytes", `whsec_${Buffer.alloc(23, 7).toString("base64")}`],
    ["a bare short secret", Buffer.from("password").toString("base64")],
  ])("refuses a secret shorter than the Standard Webhooks minimum of 24 bytes (%s)", (_, secret) => {
    const error = captureError(() => decodeSecret(secret, "secret"));
    expect(error).toBeInstanceOf(InvalidKeyError);
    expect((error as InvalidKeyError).code).toBe("INVALID_KEY");
    expect(error.message).toMatch(/at least 24 random bytes/);
    expect(error.message).toContain("generateSecret()");
    expect(error.message).not.toContain(secret.replace("whsec_", ""));
  });

  test("accepts exactly 24 bytes", () => {
    expect(decodeSecret(`whsec_${Buffer.alloc(24, 9).toString("base64")}`)).toHaveLength(24);
  });

  test.each([
    ["not base64", "whsec_not base64!"],
    ["url-safe alphabet", "whsec_ab-_"],
    ["a dangling character", "whsec_AAECA"],
    ["bad padding", "whsec_AAE=CAw="],
    ["a trailing newline", "whsec_AAECAw==\n"],
  ])("rejects a secret with %s without echoing it", (_, secret) => {
    const error = captureError(() => decodeSecret(secret, "keys[0]"));
    expect(error).toBeInstanceOf(InvalidKeyError);
    expect(error.message).toContain("keys[0]");
    expect(error.message).not.toContain(secret.slice("whsec_".length).trim());
  });

  test("explains that whitespace is the problem when the secret has some", () => {
    expect(() => decodeSecret("whsec_AAECAw==\n")).toThrow(/whitespace/);
  });

  test("rejects an empty secret", () => {
    expect(() => decodeSecret("whsec_")).toThrow(InvalidKeyError);
  });
});

function captureError(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}
