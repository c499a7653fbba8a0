import { getRandomValues } from "node:crypto";
import type { Clock } from "./clock.js";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower-case
const CODES = Array.from(ALPHABET, (char) => char.charCodeAt(0));

/** Makes ids like `msg_01jd8x3k2m9q4w7e5r6t8y0u1i`: prefix, 10 time chars, 16 random chars. */
export type IdGenerator = (prefix: string) => string;

/**
 * Time-sortable ids (ULID layout): ids made later sort later, even within one millisecond, so
 * storage can page through messages by id. Time comes from the injected clock.
 */
export function createIdGenerator(clock: Clock): IdGenerator {
  let lastTime = -1;
  let timePart = "";
  let lastRandom: Uint8Array = new Uint8Array(16);
  return (prefix) => {
    const time = clock.now();
    if (time <= lastTime) {
      increment(lastRandom);
    } else {
      lastTime = time;
      timePart = encodeTime(time);
      lastRandom = randomBytes16();
      lastRandom[0]! &= 0x0f; // headroom so increments within one millisecond cannot overflow
    }
    return `${prefix}_${timePart}${encodeRandom(lastRandom)}`;
  };
}

/**
 * The smallest id `createIdGenerator` can make with `prefix` at or after `time`: every id made at or
 * after `time` sorts at or after it (in code-unit order), so an id range bounds a time range. For
 * storages (e.g. attempt ids, made after the attempt started, bound `startedAt` from below).
 */
export function idFloor(prefix: string, time: number): string {
  return `${prefix}_${encodeTime(Math.max(0, Math.floor(time)))}`;
}

/**
 * The time (epoch ms) in an id `createIdGenerator` made, or null when `id` is not one: the inverse of
 * `idFloor`. For storages that bound a time range by an id (e.g. `attemptsAfter`).
 */
export function idTime(id: string): number | null {
  const underscore = id.indexOf("_");
  const part = underscore < 0 ? "" : id.slice(underscore + 1, underscore + 11);
  if (part.length !== 10) return null;
  let time = 0;
  for (const char of part) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return null;
    time = time * 32 + digit;
  }
  return time;
}

/** `idFloor` of message ids: messages created before `time` have ids below it (see `PruneRequest`). */
export function messageIdBound(time: number): string {
  return idFloor("msg", time);
}

// A getRandomValues call costs about 5 µs whatever its size (the RNG's per-call work), and ids take
// 16 bytes on every new millisecond: take them from a pool refilled 4 KiB at a time instead.
const POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let poolOffset = 0;

function randomBytes16(): Uint8Array {
  if (poolOffset + 16 > pool.length) {
    pool = getRandomValues(new Uint8Array(POOL_BYTES));
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  return bytes;
}

function encodeTime(time: number): string {
  let out = "";
  let rest = time;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[rest % 32]! + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

const randomCodes: number[] = new Array(16).fill(0);

function encodeRandom(bytes: Uint8Array): string {
  for (let i = 0; i < 16; i++) randomCodes[i] = CODES[bytes[i]! & 31]!;
  return String.fromCharCode(...randomCodes);
}

function increment(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    // Only the low 5 bits of each byte are encoded, so carry at 32.
    const next = (bytes[i]! & 31) + 1;
    bytes[i] = next & 31;
    if (next < 32) return;
  }
}
