import { describe, expect, test } from "vitest";
import { parseHttpDate, parseRetryAfter } from "./retry-after.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0); // Thu, 01 Jan 2026 12:00:00 GMT

describe("parseRetryAfter", () => {
  test.each([
    ["0", 0],
    ["1", 1_000],
    ["120", 120_000],
    ["86400", 86_400_000],
    ["007", 7_000],
    [" 30 ", 30_000],
  ])("delta-seconds %j waits %i ms", (header, expected) => {
    expect(parseRetryAfter(header, NOW)).toBe(expected);
  });

  test.each([
    ["IMF-fixdate", "Thu, 01 Jan 2026 12:02:00 GMT", 120_000],
    ["IMF-fixdate, lower case", "thu, 01 jan 2026 12:00:30 gmt", 30_000],
    ["obsolete RFC 850", "Thursday, 01-Jan-26 13:00:00 GMT", 3_600_000],
    ["obsolete asctime", "Thu Jan  1 12:00:05 2026", 5_000],
    ["asctime with a two-digit day", "Sat Jan 31 12:00:00 2026", 30 * 86_400_000],
    ["exactly now", "Thu, 01 Jan 2026 12:00:00 GMT", 0],
  ])("an HTTP-date in %s form waits until then", (_form, header, expected) => {
    expect(parseRetryAfter(header, NOW)).toBe(expected);
  });

  test.each([
    ["IMF-fixdate", "Sun, 06 Nov 1994 08:49:37 GMT"],
    ["RFC 850", "Sunday, 06-Nov-94 08:49:37 GMT"],
    ["asctime", "Sun Nov  6 08:49:37 1994"],
  ])("a %s date in the past waits 0 ms", (_form, header) => {
    expect(parseRetryAfter(header, NOW)).toBe(0);
  });

  test.each([
    [undefined],
    [null],
    [""],
    ["   "],
    ["1.5"],
    ["-1"],
    ["+5"],
    ["1e3"],
    ["5s"],
    ["soon"],
    ["120 seconds"],
    ["9".repeat(30)],
    ["2026-01-01T12:05:00Z"],
    ["Thu, 01 Jan 2026 12:02:00"],
    ["Thu, 01 Jan 2026 12:02:00 UTC"],
    ["Thu, 1 Jan 2026 12:02:00 GMT"],
    ["Thu, 31 Feb 2026 12:02:00 GMT"],
    ["Thu, 01 Jan 2026 24:00:00 GMT"],
    ["Thu, 01 Foo 2026 12:02:00 GMT"],
    ["Thu Jan  1 12:00:05 2026 GMT"],
  ])("%j is not a valid Retry-After", (header) => {
    expect(parseRetryAfter(header, NOW)).toBeUndefined();
  });
});

describe("parseHttpDate", () => {
  test.each([
    ["1994 stays 1994 seen from 2026", "Sunday, 06-Nov-94 08:49:37 GMT", Date.UTC(1994, 10, 6, 8, 49, 37)],
    ["26 is this century", "Thursday, 01-Jan-26 00:00:00 GMT", Date.UTC(2026, 0, 1)],
    [
      "76 is exactly 50 years ahead, so still this century",
      "Monday, 01-Jan-76 00:00:00 GMT",
      Date.UTC(2076, 0, 1),
    ],
    [
      "77 is more than 50 years ahead, so last century",
      "Friday, 01-Jan-77 00:00:00 GMT",
      Date.UTC(1977, 0, 1),
    ],
  ])("RFC 850 two-digit years: %s", (_label, header, expected) => {
    expect(parseHttpDate(header, NOW)).toBe(expected);
  });

  test("all three forms of the RFC's example denote the same instant", () => {
    const expected = Date.UTC(1994, 10, 6, 8, 49, 37);
    expect(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).toBe(expected);
    expect(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", NOW)).toBe(expected);
    expect(parseHttpDate("Sun Nov  6 08:49:37 1994", NOW)).toBe(expected);
  });
});
