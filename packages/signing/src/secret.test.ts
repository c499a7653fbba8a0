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
    expect(decodeSecret(`whsec_${bare}`)).toEqual(Buffer.from(bare, "base64"));
    expect(decodeSecret(bare)).toEqual(Buffer.from(bare, "base64"));
  });

  test("accepts base64 with and without padding", () => {
    expect(decodeSecret("whsec_AAECAw==")).toEqual(Buffer.from([0, 1, 2, 3]));
    expect(decodeSecret("whsec_AAECAw")).toEqual(Buffer.from([0, 1, 2, 3]));
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
