import { InvalidInputError } from "../errors.js";

/**
 * A length of time: `"250ms" | "30s" | "5m" | "2h" | "1d"`, or a number of milliseconds.
 * @example
 * const lease: Duration = "60s";
 */
export type Duration = number | `${number}ms` | `${number}s` | `${number}m` | `${number}h` | `${number}d`;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

// Digits with an optional fraction, then one unit; no signs, exponents, spaces or bare numbers,
// so "1e3s", " 5s", "-5s" and "500" are all rejected rather than guessed at.
const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

const ACCEPTED_FORMS = `"250ms" | "30s" | "5m" | "2h" | "1d" or a non-negative number of milliseconds`;

/** Converts a duration to whole milliseconds, or returns `undefined` when it is not a valid duration. */
export function parseDuration(value: unknown): number | undefined {
  let ms: number;
  if (typeof value === "number") {
    ms = value;
  } else if (typeof value === "string") {
    const match = DURATION_PATTERN.exec(value);
    if (!match) return undefined;
    ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  } else {
    return undefined;
  }
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  const rounded = Math.round(ms);
  return Number.isSafeInteger(rounded) ? rounded : undefined;
}

/**
 * Converts a duration to milliseconds, throwing `InvalidInputError` (`INVALID_DURATION`) that names
 * `what` was being set when it is invalid.
 * @example
 * toMs("5m", "circuitBreaker.cooldown"); // 300000
 */
export function toMs(value: Duration, what = "duration"): number {
  const ms = parseDuration(value);
  if (ms === undefined) {
    throw new InvalidInputError(
      "INVALID_DURATION",
      `Invalid ${what}: ${describeValue(value)}. Use ${ACCEPTED_FORMS}.`,
    );
  }
  return ms;
}

const FORMAT_UNITS: readonly (readonly [string, number])[] = [
  ["d", UNIT_MS.d],
  ["h", UNIT_MS.h],
  ["m", UNIT_MS.m],
  ["s", UNIT_MS.s],
  ["ms", UNIT_MS.ms],
];

/**
 * Formats milliseconds compactly for messages and tables: the largest unit, plus the next smaller
 * unit when it is non-zero (`1d 2h`); anything smaller is dropped.
 * @example
 * formatDuration(93_600_000); // "1d 2h"
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return `${ms}ms`;
  if (ms < 0) return `-${formatDuration(-ms)}`;
  const rounded = Math.round(ms);
  const index = FORMAT_UNITS.findIndex(([, size]) => rounded >= size);
  if (index === -1) return "0ms";
  const [unit, size] = FORMAT_UNITS[index]!;
  const text = `${Math.floor(rounded / size)}${unit}`;
  const next = FORMAT_UNITS[index + 1];
  if (!next) return text;
  const remainder = Math.floor((rounded % size) / next[1]);
  return remainder > 0 ? `${text} ${remainder}${next[0]}` : text;
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value == null) return String(value);
  return `a value of type ${Array.isArray(value) ? "array" : typeof value}`;
}
