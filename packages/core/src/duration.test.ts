import { describe, expect, test } from "vitest";
import { isPostelError } from "./errors.js";
import { type Duration, formatDuration, parseDuration, toMs } from "./duration.js";

describe("parseDuration", () => {
  test.each([
    [0, 0],
    [250, 250],
    [1.4, 1],
    [1.6, 2],
    ["0ms", 0],
    ["250ms", 250],
    ["30s", 30_000],
    ["1.5s", 1_500],
    ["5m", 300_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["0.5d", 43_200_000],
    ["0.0004s", 0],
  ])("reads %j as %i ms", (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  test.each([
    [-1],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    [Number.MAX_SAFE_INTEGER * 2],
    [""],
    ["5"],
    ["-5s"],
    ["+5s"],
    [" 5s"],
    ["5s "],
    ["5 s"],
    ["5S"],
    ["5sec"],
    ["5w"],
    ["1e3ms"],
    [".5s"],
    ["5.s"],
    ["5s5m"],
    ["9".repeat(400) + "ms"],
    [null],
    [undefined],
    [true],
    [{}],
    [["5s"]],
  ])("rejects %j", (input) => {
    expect(parseDuration(input)).toBeUndefined();
  });
});

describe("toMs", () => {
  test("returns milliseconds for a valid duration", () => {
    expect(toMs("5m", "circuitBreaker.cooldown")).toBe(300_000);
    expect(toMs(42)).toBe(42);
  });

  test("throws INVALID_DURATION naming the field, the bad value and the accepted forms", () => {
    const error = catchError(() => toMs("5 minutes" as Duration, "circuitBreaker.cooldown"));
    expect(isPostelError(error)).toBe(true);
    expect(error).toMatchObject({ code: "INVALID_DURATION" });
    const message = (error as Error).message;
    expect(message).toContain("circuitBreaker.cooldown");
    expect(message).toContain('"5 minutes"');
    expect(message).toContain('"250ms" | "30s" | "5m" | "2h" | "1d"');
    expect(message).toContain("milliseconds");
  });

  test("calls the field 'duration' when no name is given", () => {
    expect(() => toMs(-5)).toThrow(/Invalid duration: -5\./);
  });

  test("describes non-primitive values by type instead of printing them", () => {
    expect(() => toMs({} as unknown as Duration, "ttl")).toThrow(/Invalid ttl: a value of type object/);
  });
});

describe("formatDuration", () => {
  test.each([
    [0, "0ms"],
    [0.4, "0ms"],
    [250, "250ms"],
    [999, "999ms"],
    [1_000, "1s"],
    [1_500, "1s 500ms"],
    [5_000, "5s"],
    [90_000, "1m 30s"],
    [300_000, "5m"],
    [7_200_000, "2h"],
    [86_400_000, "1d"],
    [93_600_000, "1d 2h"],
    [86_400_000 + 300_000, "1d"],
    [3 * 86_400_000, "3d"],
    [-5_000, "-5s"],
    [Number.NaN, "NaNms"],
  ])("formats %d ms as %s", (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });

  test.each(["250ms", "30s", "5m", "2h", "1d"] as const)("round-trips %s", (text) => {
    expect(formatDuration(toMs(text))).toBe(text);
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}
