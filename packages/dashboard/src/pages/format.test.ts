import { describe, expect, test } from "vitest";
import { atLeast, printable } from "./format.js";

describe("printable", () => {
  test.each([
    ["\u001b]0;title\u0007", "␛]0;title␇"],
    ["\u001b[31mred\u001b[0m", "␛[31mred␛[0m"],
    ["nul\u0000 del\u007f", "nul␀ del␡"],
    ["tab\tline\nreturn\r\n", "tab\tline\nreturn\r\n"],
    ["<b>markup is the template's job</b>", "<b>markup is the template's job</b>"],
  ])("shows %j as %j", (text, shown) => {
    expect(printable(text)).toBe(shown);
  });
});

describe("atLeast", () => {
  test("marks a count that reached the cap as a lower bound, and only then", () => {
    expect(atLeast(1000, 1000)).toBe("1000+");
    expect(atLeast(999, 1000)).toBe("999");
    expect(atLeast(5000, null)).toBe("5000");
  });
});
