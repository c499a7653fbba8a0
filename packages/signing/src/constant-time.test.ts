import { describe, expect, test } from "vitest";
import { constantTimeEqual, findMatch } from "./constant-time.js";

describe("constantTimeEqual", () => {
  test("is true for equal bytes and equal strings", () => {
    expect(constantTimeEqual(Buffer.from("abc"), new Uint8Array([97, 98, 99]))).toBe(true);
    expect(constantTimeEqual("abc", "abc")).toBe(true);
  });

  test("is false for different bytes of the same length", () => {
    expect(constantTimeEqual("abc", "abd")).toBe(false);
  });

  test("returns false instead of throwing when the lengths differ", () => {
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
    expect(constantTimeEqual("", "a")).toBe(false);
  });

  test("compares strings as UTF-8 so a non-ASCII look-alike never matches", () => {
    expect(constantTimeEqual("\u0141", "A")).toBe(false);
  });
});

describe("findMatch", () => {
  const b = (text: string) => Buffer.from(text);

  test("returns the index of the first expected value any candidate matches", () => {
    expect(findMatch([b("k0"), b("k1"), b("k2")], [b("zz"), b("k1"), b("k2")])).toBe(1);
  });

  test("returns -1 when nothing matches", () => {
    expect(findMatch([b("k0")], [b("k1"), b("longer")])).toBe(-1);
    expect(findMatch([b("k0")], [])).toBe(-1);
  });
});
