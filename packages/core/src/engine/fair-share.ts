import type { Clock } from "../clock.js";

/** How long an endpoint counts as having work after its deliveries were last claimed or held back. */
const ACTIVE_MS = 1_000;
/** Endpoints answering within this (smoothed) are quick: a slot given to one comes back soon. */
const QUICK_MS = 1_000;
/** Quick endpoints answering in at least this long may be waiting on the network. */
const WAITING_MS = 20;
/**
 * Latency above this multiple of an endpoint's lowest recent latency is queueing (here, or at the
 * receiver), not the network: more in flight would only queue more.
 */
const QUEUEING = 2;
/**
 * Latency under this multiple of the event loop's delay may be this process's own lateness (SQLite's
 * synchronous commits, a busy CPU): answers wait for the loop, not on the network.
 */
const LAGS = 5;
/** How long an endpoint's lowest latency stands before it is measured afresh. */
const FLOOR_MS = 10_000;

/** An endpoint's answered requests: latency smoothed, and its lowest lately (what it takes unloaded). */
interface Latency {
  smoothed: number;
  floor: number;
  floorAt: number;
}

/** When an endpoint last had work, and whether some of it was held back for want of room then. */
interface Activity {
  at: number;
  heldBackAt: number;
}

/**
 * How many requests each endpoint may have in flight on this instance, so that a slow, hung or failing
 * endpoint costs only its own share of the pool.
 *
 * The budget is shared equally among the endpoints that have work, `budget / n` each (at least one),
 * and an endpoint's own `maxInFlight` lowers its cap further. An endpoint alone gets the whole budget:
 * the scheduler stays work-conserving. Work over a cap is not held here: it stays (or goes back) in
 * storage, due, for whichever worker has room.
 *
 * What an endpoint may take depends on what a slot given to it costs. A slot given to a slow or hung
 * endpoint may not come back for the whole request timeout, so those (and endpoints not yet measured)
 * get exactly `budget / n`, where n counts every endpoint that had deliveries claimed in the last
 * second: a fast endpoint's short pause between batches never lets a hung one take its slots. A
 * quick endpoint gives its slots back within a second anyway, so it gets its share of what the others
 * with work right now leave (max-min fairness): each other endpoint with requests in flight,
 * deliveries in the claim being handed out (all counted before any is admitted, so a batch's order
 * decides nothing) or work held back in the last second keeps `min(what it has and wants, budget / n)`.
 * An endpoint that sends a request now and then therefore costs a busy quick endpoint one slot, not
 * half the pool.
 */
export class FairShare {
  readonly #inFlight = new Map<string, number>();
  /** The `maxInFlight` each endpoint in flight was started under. */
  readonly #limits = new Map<string, number | null>();
  readonly #activity = new Map<string, Activity>();
  /** Endpoints with deliveries in the claim being handed out, and how many. */
  #present = new Map<string, number>();
  readonly #latency = new Map<string, Latency>();
  #total = 0;
  /** Endpoints that count as having work: every one for a slow endpoint's share, and those with work
   * now (with what each has or wants) for a quick one's. */
  #counts: { careful: number; now: Map<string, number> } = { careful: 0, now: new Map() };
  /** For `#counts.now` at one budget: the equal share, and what everyone keeps of it in total. */
  #keptMemo: { now: Map<string, number>; budget: number; equal: number; total: number } | null = null;
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

  /** Counts these endpoints (one entry per delivery) as having work until `claimed()`. */
  present(endpointIds: Iterable<string>): void {
    const now = this.clock.now();
    for (const id of endpointIds) {
      this.#present.set(id, (this.#present.get(id) ?? 0) + 1);
      const activity = this.#activity.get(id);
      if (activity) activity.at = now;
      else this.#activity.set(id, { at: now, heldBackAt: Number.NEGATIVE_INFINITY });
    }
    this.#sharedAt = Number.NEGATIVE_INFINITY;
  }

  /** The claim has been handed out: its endpoints now count through their activity. */
  claimed(): void {
    if (this.#present.size === 0) return;
    this.#present = new Map();
    this.#sharedAt = Number.NEGATIVE_INFINITY;
  }

  /** Notes that some of the endpoint's work was held back for want of room: it has work waiting. */
  heldBack(endpointId: string): void {
    const now = this.clock.now();
    const activity = this.#activity.get(endpointId);
    if (activity) {
      activity.at = now;
      activity.heldBackAt = now;
    } else this.#activity.set(endpointId, { at: now, heldBackAt: now });
    this.#sharedAt = Number.NEGATIVE_INFINITY;
  }

  /** The most requests the endpoint may have in flight now (`limit`: its own `maxInFlight`, if any). */
  cap(endpointId: string, limit: number | null = null): number {
    const counts = this.#currentCounts();
    const budget = this.budget();
    let share: number;
    if (this.quick(endpointId)) {
      // Max-min: an equal share of the endpoints with work now, and whatever the others leave.
      const own = counts.now.get(endpointId);
      let equal: number;
      let others: number;
      if (own === undefined) {
        // Not counted yet (rare: every claimed endpoint is present): count it in, the long way.
        equal = budget / (counts.now.size + 1);
        others = 0;
        for (const wants of counts.now.values()) others += Math.min(wants, equal);
      } else {
        // The sum over everyone is kept per recount and budget: per delivery this is O(1), not O(n).
        ({ equal, total: others } = this.#kept(counts.now, budget));
        others -= Math.min(own, equal);
      }
      // The epsilon keeps a sum taken another way from rounding a whole share down by one.
      share = Math.max(1, Math.floor(Math.max(equal, budget - others) + 1e-9));
    } else {
      // The endpoint asking counts itself, whether or not it is counted yet.
      const known = this.#activity.has(endpointId) || this.#inFlight.has(endpointId);
      share = Math.max(1, Math.floor(budget / (counts.careful + (known ? 0 : 1))));
    }
    return limit === null ? share : Math.min(limit, share);
  }

  /** How many more requests the endpoint may start now (≤ 0 when it is at its cap). */
  room(endpointId: string, limit: number | null = null): number {
    return this.cap(endpointId, limit) - this.inFlightOf(endpointId);
  }

  /** Counts a request to the endpoint (whose own `maxInFlight` is `limit`) as started. */
  acquire(endpointId: string, limit: number | null = null): void {
    if (!this.#inFlight.has(endpointId)) this.#sharedAt = Number.NEGATIVE_INFINITY;
    this.#limits.set(endpointId, limit);
    this.#inFlight.set(endpointId, this.inFlightOf(endpointId) + 1);
    this.#total++;
  }

  /** Counts a request to the endpoint as finished; `latencyMs` when the receiver answered. */
  release(endpointId: string, latencyMs: number | null = null): void {
    const left = this.inFlightOf(endpointId) - 1;
    if (left > 0) this.#inFlight.set(endpointId, left);
    else {
      this.#inFlight.delete(endpointId);
      this.#limits.delete(endpointId);
      this.#sharedAt = Number.NEGATIVE_INFINITY;
    }
    this.#total--;
    if (latencyMs !== null) this.#measured(endpointId, latencyMs);
  }

  #measured(endpointId: string, ms: number): void {
    const now = this.clock.now();
    const latency = this.#latency.get(endpointId);
    if (latency === undefined) {
      if (this.#latency.size >= 10_000) this.#latency.clear();
      this.#latency.set(endpointId, { smoothed: ms, floor: ms, floorAt: now });
      return;
    }
    latency.smoothed = 0.8 * latency.smoothed + 0.2 * ms;
    if (ms <= latency.floor || now - latency.floorAt >= FLOOR_MS) {
      latency.floor = ms;
      latency.floorAt = now;
    }
  }

  /**
   * Whether the endpoint answers quickly (smoothed latency under a second). Hung, trickling and slow
   * endpoints are not, nor is one that has not answered yet.
   */
  quick(endpointId: string): boolean {
    const latency = this.#latency.get(endpointId);
    return latency !== undefined && latency.smoothed < QUICK_MS;
  }

  /**
   * Whether the endpoint's requests wait on the network, so that more of them in flight would deliver
   * more: it answers quickly but in 20 ms or more, and not much slower than it did lately at its
   * fastest, and well above this process's own lateness (`lagMs`, the event loop's delay: answers
   * wait for the loop too). When its latency has grown past twice its lowest, requests queue (here or
   * at the receiver) and more of them would only queue longer. An endpoint next door answers faster,
   * and a hung or slow one is not quick at all.
   */
  waiting(endpointId: string, lagMs = 0): boolean {
    const latency = this.#latency.get(endpointId);
    if (latency === undefined) return false;
    const { smoothed, floor } = latency;
    return (
      smoothed >= Math.max(WAITING_MS, LAGS * lagMs) && smoothed < QUICK_MS && smoothed < QUEUEING * floor
    );
  }

  /** Whether at least half the requests in flight are to endpoints that wait on the network. */
  mostlyWaiting(lagMs = 0): boolean {
    let waiting = 0;
    for (const [endpointId, n] of this.#inFlight) if (this.waiting(endpointId, lagMs)) waiting += n;
    return waiting * 2 >= this.#total && this.#total > 0;
  }

  /** Endpoints at or over their cap: claims skip their deliveries. */
  saturated(): string[] {
    const full: string[] = [];
    for (const [endpointId, n] of this.#inFlight) {
      if (n >= this.cap(endpointId, this.#limits.get(endpointId) ?? null)) full.push(endpointId);
    }
    return full;
  }

  /** The equal share among the endpoints with work now, and the sum of `min(wants, equal)` over them. */
  #kept(now: Map<string, number>, budget: number): { equal: number; total: number } {
    const memo = this.#keptMemo;
    if (memo !== null && memo.now === now && memo.budget === budget) return memo;
    const equal = budget / now.size;
    let total = 0;
    for (const wants of now.values()) total += Math.min(wants, equal);
    this.#keptMemo = { now, budget, equal, total };
    return this.#keptMemo;
  }

  /** Who has work, recomputed at most once per clock millisecond or when the endpoints change. */
  #currentCounts(): { careful: number; now: Map<string, number> } {
    const now = this.clock.now();
    if (now === this.#sharedAt) return this.#counts;
    let careful = 0;
    const withWork = new Map<string, number>();
    for (const [endpointId, activity] of this.#activity) {
      const has = this.inFlightOf(endpointId) + (this.#present.get(endpointId) ?? 0);
      if (has === 0 && now - activity.at >= ACTIVE_MS) {
        this.#activity.delete(endpointId);
        continue;
      }
      careful++;
      // Work held back: it wants as much as it can get.
      if (now - activity.heldBackAt < ACTIVE_MS) withWork.set(endpointId, Number.POSITIVE_INFINITY);
      else if (has > 0) withWork.set(endpointId, has);
    }
    for (const [endpointId, n] of this.#inFlight) {
      if (this.#activity.has(endpointId)) continue;
      careful++;
      withWork.set(endpointId, n);
    }
    this.#counts = { careful, now: withWork };
    this.#sharedAt = now;
    return this.#counts;
  }
}
