import type { Clock } from "../clock.js";

/**
 * An endpoint counts as having work for this long after its deliveries were last claimed or queued
 * here: its due rows are waiting in storage even when none of them is in flight.
 */
const ACTIVE_MS = 1_000;

/**
 * How many requests each endpoint may have in flight on this instance, so that a slow, hung or failing
 * endpoint costs only its own share of the pool.
 *
 * The budget is shared equally among the endpoints that have work: those with requests in flight and
 * those whose deliveries were claimed or queued in the last second. An endpoint alone gets the whole
 * budget (the scheduler stays work-conserving); when others have work, each gets `budget / n` (at
 * least one), and its own `maxInFlight` lowers that further. Work over an endpoint's cap is not held
 * here: it stays (or goes back) in storage, due, for whichever worker has room for it.
 */
export class FairShare {
  readonly #inFlight = new Map<string, number>();
  readonly #seen = new Map<string, number>();
  /** The `maxInFlight` each endpoint in flight was started under. */
  readonly #limits = new Map<string, number | null>();
  #total = 0;
  #share = 0;
  #sharedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    private readonly budget: () => number,
  ) {}

  /** Requests in flight on this instance, over every endpoint. */
  get inFlight(): number {
    return this.#total;
  }

  /** Requests in flight to one endpoint. */
  inFlightOf(endpointId: string): number {
    return this.#inFlight.get(endpointId) ?? 0;
  }

  /** Notes that the endpoint has work now (a delivery of it was claimed, queued or found due). */
  demand(endpointId: string): void {
    if (this.#inFlight.has(endpointId) || this.#seen.get(endpointId) === this.clock.now()) return;
    if (!this.#seen.has(endpointId)) this.#sharedAt = Number.NEGATIVE_INFINITY;
    this.#seen.set(endpointId, this.clock.now());
  }

  /** The most requests the endpoint may have in flight now; `limit` is its own `maxInFlight`, if any. */
  cap(limit: number | null = null): number {
    const share = this.#currentShare();
    return limit === null ? share : Math.min(limit, share);
  }

  /** How many more requests the endpoint may start now (≤ 0 when it is at its cap). */
  room(endpointId: string, limit: number | null = null): number {
    return this.cap(limit) - this.inFlightOf(endpointId);
  }

  /** Counts a request to the endpoint (whose own `maxInFlight` is `limit`) as started. */
  acquire(endpointId: string, limit: number | null = null): void {
    this.#limits.set(endpointId, limit);
    this.#inFlight.set(endpointId, this.inFlightOf(endpointId) + 1);
    this.#total++;
  }

  /** Counts a request to the endpoint as finished. */
  release(endpointId: string): void {
    const left = this.inFlightOf(endpointId) - 1;
    if (left > 0) this.#inFlight.set(endpointId, left);
    else {
      this.#inFlight.delete(endpointId);
      this.#limits.delete(endpointId);
      // It still has work for a while (its next deliveries may be due): keep it in the count.
      this.#seen.set(endpointId, this.clock.now());
    }
    this.#total--;
  }

  /** Endpoints at or over their cap: claims skip their deliveries. */
  saturated(): string[] {
    const full: string[] = [];
    for (const [endpointId, n] of this.#inFlight) {
      if (n >= this.cap(this.#limits.get(endpointId) ?? null)) full.push(endpointId);
    }
    return full;
  }

  /** budget / endpoints with work, recomputed at most once per clock millisecond or when one appears. */
  #currentShare(): number {
    const now = this.clock.now();
    if (now === this.#sharedAt) return this.#share;
    for (const [endpointId, at] of this.#seen) {
      if (now - at >= ACTIVE_MS && !this.#inFlight.has(endpointId)) this.#seen.delete(endpointId);
    }
    let active = this.#seen.size;
    for (const endpointId of this.#inFlight.keys()) if (!this.#seen.has(endpointId)) active++;
    this.#share = Math.max(1, Math.floor(this.budget() / Math.max(1, active)));
    this.#sharedAt = now;
    return this.#share;
  }
}
