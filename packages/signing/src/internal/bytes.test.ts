import fc from "fast-check";
import { expect, test } from "vitest";
import { concatBytes, encodeHex, fromUtf8 } from "./bytes.js";

test("concatBytes joins text (as UTF-8) and bytes in order", () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string({ unit: "grapheme" }), fc.uint8Array())), (parts) => {
      const expected = Buffer.concat(
        parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part)),
      );
      expect(Buffer.from(concatBytes(parts)).equals(expected)).toBe(true);
    }),
  );
});

test("encodeHex writes lower-case hex, two digits a byte", () => {
  expect(encodeHex(new Uint8Array([0, 9, 171, 255]))).toBe("0009abff");
});

test("fromUtf8 keeps a leading BOM and replaces invalid sequences, as Buffer#toString does", () => {
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0xff, 0x62]);
  expect(fromUtf8(bytes)).toBe(Buffer.from(bytes).toString("utf8"));
});
