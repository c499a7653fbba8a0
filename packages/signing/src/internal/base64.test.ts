import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { decodeBase64Strict, encodeBase64 } from "./base64.js";

/** The previous decoder, over Node's Buffer: the strict one must agree with it on every input. */
function bufferDecode(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const unpadded = text.replace(/=+$/, "");
  if (unpadded.length !== text.length && text.length % 4 !== 0) return undefined;
  if (unpadded.length % 4 === 1) return undefined;
  const bytes = Buffer.from(unpadded, "base64");
  if (bytes.toString("base64").replace(/=+$/, "") !== unpadded) return undefined;
  return new Uint8Array(bytes);
}

const base64ish = fc
  .array(fc.constantFrom(..."AQgw+/=9z_-é \n".split("")), { maxLength: 12 })
  .map((chars) => chars.join(""));

describe("base64", () => {
  test("encodes as Buffer does, every length", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
        expect(encodeBase64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
      }),
    );
  });

  test("decodes what it encodes, padded or not", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
        const text = encodeBase64(bytes);
        expect(decodeBase64Strict(text)).toEqual(bytes);
        expect(decodeBase64Strict(text.replace(/=+$/, ""))).toEqual(bytes);
      }),
    );
  });

  test("accepts and refuses exactly what the Buffer-based strict decoder did", () => {
    fc.assert(
      fc.property(fc.oneof(base64ish, fc.uint8Array({ maxLength: 9 }).map(encodeBase64)), (text) => {
        expect(decodeBase64Strict(text)).toEqual(bufferDecode(text));
      }),
      { numRuns: 5000 },
    );
  });

  test.each(["AB=", "A", "AB=C", "A===", "==", "QR==", "QUK", "QUJ=", "Zm9v\n", "Zm9v_"])(
    "refuses %j",
    (text) => {
      expect(decodeBase64Strict(text)).toBeUndefined();
    },
  );
});
