import { InvalidArgumentError, WebhookVerificationError } from "./errors.js";

/** Default replay window, either side of the receiver's clock: 5 minutes, in milliseconds. */
export const DEFAULT_TOLERANCE_MS = 5 * 60 * 1000;

// Twelve digits of seconds reach the year 33658; thirteen digits is what `Date.now()` prints.
const SECONDS = /^(?:0|[1-9]\d{0,11})$/;
const DIGITS = /^\d+$/;

/**
 * Parses a timestamp header strictly as integer seconds since the epoch. Signs, decimals, spaces
 * and leading zeros are refused rather than normalised, because the header's exact text is part
 * of the signed content and a lenient parse would sign one string and check another.
 */
export function parseTimestampSeconds(value: string, header: string): number {
  if (SECONDS.test(value)) return Number(value);
  if (DIGITS.test(value) && value.length >= 13 && value[0] !== "0") {
    throw new WebhookVerificationError(
      "MALFORMED_HEADER",
      `The ${header} header has ${value.length} digits: it looks like milliseconds. ` +
        "The timestamp must be Unix time in seconds, not milliseconds (Math.floor(Date.now() / 1000)).",
      header,
    );
  }
  throw new WebhookVerificationError(
    "MALFORMED_HEADER",
    `The ${header} header must be a positive integer number of seconds since the Unix epoch ` +
      "(digits only: no sign, decimals, spaces or leading zeros).",
    header,
  );
}

/**
 * Refuses a timestamp further than `toleranceMs` from `nowMs` in either direction: too old is a
 * possible replay, too new is a sender clock that would let a captured request stay valid longer.
 * A request exactly on the boundary is accepted.
 */
export function assertInWindow(seconds: number, nowMs: number, toleranceMs: number, header: string): void {
  const skewMs = seconds * 1000 - nowMs;
  if (Math.abs(skewMs) <= toleranceMs) return;
  const direction = skewMs < 0 ? "in the past" : "in the future";
  throw new WebhookVerificationError(
    "TIMESTAMP_OUT_OF_WINDOW",
    `The ${header} header is ${Math.round(Math.abs(skewMs) / 1000)} s ${direction}, outside the ` +
      `tolerance of ${Math.round(toleranceMs / 1000)} s. Check the clocks of sender and receiver; ` +
      "a replayed request also looks like this.",
    header,
  );
}

/**
 * Validates a tolerance option. A NaN or negative tolerance must not slip through: every
 * comparison against NaN is false, which would silently accept any timestamp.
 */
export function resolveTolerance(tolerance: number | undefined, fallback: number): number {
  if (tolerance === undefined) return fallback;
  if (typeof tolerance !== "number" || Number.isNaN(tolerance) || tolerance < 0) {
    throw new InvalidArgumentError(
      `tolerance must be a non-negative number of milliseconds (default ${fallback}); got ${String(tolerance)}.`,
    );
  }
  return tolerance;
}

/** Converts a signing timestamp (a `Date` or integer seconds) to integer seconds. */
export function toTimestampSeconds(timestamp: Date | number): number {
  const seconds = timestamp instanceof Date ? Math.floor(timestamp.getTime() / 1000) : timestamp;
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new InvalidArgumentError(
      `timestamp must be a Date or a non-negative integer number of seconds; got ${String(timestamp)}.`,
    );
  }
  if (seconds >= 1e12) {
    throw new InvalidArgumentError(
      `timestamp ${seconds} looks like milliseconds; pass seconds, not milliseconds ` +
        "(Math.floor(Date.now() / 1000)), or a Date.",
    );
  }
  return seconds;
}
