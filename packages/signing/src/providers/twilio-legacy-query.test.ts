import { parse, stringify } from "node:querystring";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { reencodeLegacyQuery } from "./twilio-legacy-query.js";

const legacy = (query: string) => stringify(parse(query));

// The characters that steer the parser: separators, escapes (valid, short and invalid), plus signs,
// integer-like keys (ordered first by objects), "__proto__", and ASCII around them.
const piece = fc.oneof(
  fc.constantFrom(
    "&",
    "=",
    "+",
    "%",
    "%2",
    "%41",
    "%e9",
    "%C3%A9",
    "%ED%A0%80",
    "%zz",
    "1",
    "0",
    "__proto__",
    "a",
    "B",
  ),
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
    maxLength: 4,
  }),
);

describe("reencodeLegacyQuery", () => {
  test("matches node:querystring's stringify(parse()) on the ASCII queries new URL() writes", () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 24 }).map((pieces) => pieces.join("")),
        (query) => {
          expect(reencodeLegacyQuery(query)).toBe(legacy(query));
        },
      ),
      { seed: 8, numRuns: 3000 },
    );
  });

  test.each([
    ["a=1&b=2&a=3", "a=1&a=3&b=2"],
    ["b=1&2=x&1=y", "1=y&2=x&b=1"],
    ["a+b=c+d", "a%20b=c%20d"],
    ["q=%zz&r=%41", "q=%25zz&r=A"],
    ["flag&&=v&", "flag=&=v"],
  ])("%s becomes %s", (query, expected) => {
    expect(reencodeLegacyQuery(query)).toBe(expected);
    expect(legacy(query)).toBe(expected);
  });

  test("keeps at most 1000 pairs, as Node does", () => {
    const query = Array.from({ length: 1200 }, (_, index) => `k${index}=v`).join("&");
    expect(reencodeLegacyQuery(query)).toBe(legacy(query));
    expect(reencodeLegacyQuery(query).split("&")).toHaveLength(1000);
  });
});
