import { timingSafeEqual, utf8 } from "#crypto";

/**
 * Compares two byte strings in time that depends only on their lengths. Unlike
 * `crypto.timingSafeEqual` it returns false instead of throwing when the lengths differ, so
 * attacker-supplied garbage of any length is simply "no match". Returning early on a length
 * mismatch leaks nothing: the length of a correct signature is fixed by the algorithm and public.
 *
 * @example
 * constantTimeEqual(received, expected); // strings are compared as their UTF-8 bytes
 */
export function constantTimeEqual(a: Uint8Array | string, b: Uint8Array | string): boolean {
  return timingSafeEqual(typeof a === "string" ? utf8(a) : a, typeof b === "string" ? utf8(b) : b);
}

/**
 * Compares every candidate signature against every expected one and returns the index of the
 * first expected value that matched, or -1. It deliberately never stops early, so the response
 * time does not reveal how many keys were tried or which one matched.
 */
export function findMatch(expected: readonly Uint8Array[], candidates: readonly Uint8Array[]): number {
  let match = -1;
  for (let index = 0; index < expected.length; index++) {
    const value = expected[index]!;
    let hit = false;
    for (const candidate of candidates) {
      // Bitwise OR keeps the loop free of data-dependent branches.
      hit = (Number(hit) | Number(timingSafeEqual(value, candidate))) === 1;
    }
    if (hit && match === -1) match = index;
  }
  return match;
}
