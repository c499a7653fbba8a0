/** The time the receiving gate judges timestamps and dedup expiry on; `Postel()` passes its own clock. */
export interface Clock {
  /** Current time in epoch milliseconds. */
  now(): number;
}

/** Real time. */
export const systemClock: Clock = { now: () => Date.now() };
