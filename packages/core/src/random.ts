/** A source of uniform random numbers in [0, 1); injected so jitter is reproducible in tests. */
export type Random = () => number;

/** `Math.random`, the source used unless a test injects another. */
export const defaultRandom: Random = Math.random;

/**
 * A deterministic generator (mulberry32) for tests: the same seed yields the same sequence.
 * @example
 * const random = seededRandom(42);
 * ExponentialBackoff().delayBeforeRetry(1, random); // the same value on every run
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
