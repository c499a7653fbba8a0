import type { TimerHandle } from "../clock.js";
import { isStorageOutage } from "../errors.js";
import type { ClaimedDelivery } from "../storage/records.js";
import type { DeliveryOutcome } from "../storage/storage.js";
import {
  type ClaimedWork,
  type ClaimShare,
  claimWork,
  isLimited,
  limitedClaim,
  limitedEndpoints,
} from "./claim-work.js";
import { ConcurrencyBudget, eventLoopLag } from "./concurrency-budget.js";
import { type DeliveryResult, deliver, outcomeOf } from "./deliver.js";
import { DueWork } from "./due-work.js";
import type { CompiledEndpoint } from "./endpoint-cache.js";
import { FairShare } from "./fair-share.js";
import { type FanoutPass, fanOut } from "./fanout.js";
import {
  type BatchContext,
  type BatchSummary,
  emptySummary,
  planBatch,
  recordResults,
  renewWhileWorking,
  skipped,
} from "./process-batch.js";

const MAX_ERROR_BACKOFF_MS = 30_000;
// Probing a database that is away (STORAGE_UNAVAILABLE, STORAGE_TIMEOUT): from 100 ms, doubling to 500 ms.
const OUTAGE_PROBE_MIN_MS = 100;
const OUTAGE_PROBE_MAX_MS = 500;
const MAX_FLUSH = 500;
// How long a finished delivery's outcome may wait for others to share its write.
const LINGER_MS = 10;
// An express claim (see `expedite`) runs while fan-out starts fewer than this share of what it creates.
const EXPRESS_BELOW = 0.5;
// ... and takes at most this many messages.
const EXPRESS_MESSAGES = 8;
// While fan-out starts at least this share of what it creates, a claim is sized to start the room's
// worth; below it, to create the room's worth times the share (see `#share`).
const MOSTLY_STARTED = 0.75;

/** A claim's share of the pool, and afterwards what it held back for want of room. */
type PoolShare = ClaimShare & {
  /** Deliveries fan-out queued because their endpoint was at its share. */
  heldBack(): number;
  /** Whether one of those belongs to an endpoint that waits on the network (a bigger pool would help). */
  heldBackWaiting(): boolean;
};

/** How the pipeline waits: on the injected clock, woken early by `wake()`/`stop()`. */
export interface PipelineControl {
  running(): boolean;
  sleep(ms: number): Promise<void>;
  /** How long the idle pipeline waits before looking for work again. */
  pollIntervalMs(): number;
  /** Ends a `sleep` now (or the next one, when none is running): there is work to look for. */
  wake(): void;
}

/**
 * The worker pool of `postel.start()`. Deliveries run independently, up to the pool's budget at once
 * (`ConcurrencyBudget`), each endpoint within its fair share of it (`FairShare`): the claimer tops
 * the pool up as requests finish (no batch waits for its slowest request), claims leave saturated
 * endpoints' work in storage, and outcomes are group-committed, one `recordOutcomes` at a time, in
 * batches of up to `batchSize` (or whatever finished within a 10 ms linger, or everything once
 * nothing is in flight). Leases of everything claimed but not yet recorded are renewed every half
 * lease.
 */
export class Pipeline {
  readonly #leased = new Map<string, ClaimedDelivery>();
  readonly #summary: BatchSummary = emptySummary();
  readonly #budget: ConcurrencyBudget;
  readonly #lag: ReturnType<typeof eventLoopLag> | null;
  readonly #fair: FairShare;
  /** When the work this worker recorded falls due: claims look for due work only when some may be. */
  readonly #due: DueWork;
  /** Deliveries per fanned-out message, smoothed: sizes fan-out claims to the room in the pool. */
  #degree = 1;
  /**
   * Share of fan-out's deliveries started at once (the rest were queued: their endpoints had no
   * room; or wait behind their ordering key's head), smoothed: while one endpoint is at its share, or
   * a key's backlog is being fanned out behind its head, fan-out claims shrink instead of turning
   * that backlog into rows nobody can start yet, ahead of everything sent after it.
   */
  #admitted = 1;
  /** The same share for the last fan-out claim alone (`#admitted` takes a few claims to follow a change). */
  #lastAdmitted = 1;
  /** The last claim filled its limit: more work is waiting. */
  #backlog = false;
  /** The last fan-out claim got all the messages it asked for: a backlog of new messages is draining. */
  #fanoutBacklog = false;
  #buffer: DeliveryResult[] = [];
  /**
   * Deliveries recording leased to this worker (`ORDERING_RULES.leaseNext`: the next of a key whose
   * delivery just ended), started before anything is claimed.
   */
  #ready: ClaimedDelivery[] = [];
  #flushing: Promise<void> | null = null;
  /** Outcomes in the flush being written. */
  #recording = 0;
  /** Deliveries handed to `startNow` whose start (planning, then a slot each) has not finished yet. */
  #starting = 0;
  #slotFreed: (() => void) | null = null;
  /** A claim of `#fill` is running. */
  #claiming = false;
  /** An express claim (`expedite`) is running. */
  #expressing = false;
  /** News arrived while an express claim ran: another follows it, if the main claim still runs. */
  #expressAgain = false;
  #linger: TimerHandle | null = null;
  #errorBackoff = 0;

  constructor(
    private readonly ctx: BatchContext,
    private readonly control: PipelineControl,
  ) {
    const { min, max } = ctx.config.workers.concurrency;
    this.#lag = min === max ? null : eventLoopLag();
    this.#budget = new ConcurrencyBudget(min, max, ctx.clock, this.#lag ?? undefined);
    this.#fair = new FairShare(ctx.clock, () => this.#budget.value);
    this.#due = new DueWork(ctx.clock, () => this.control.pollIntervalMs());
  }

  /** Claims and delivers until `control.running()` turns false, then settles everything in flight. */
  async run(): Promise<void> {
    const renewal = renewWhileWorking(this.ctx, () => this.#leased.values());
    this.#budget.start();
    try {
      while (this.control.running()) await this.#fill();
      this.#release(this.#ready.splice(0));
      while (this.#fair.inFlight > 0) await this.#nextSlot();
      await this.#flushAll();
    } finally {
      this.#budget.stop();
      this.#lag?.stop();
      renewal.cancel();
      this.#linger?.cancel();
    }
  }

  async #fill(): Promise<void> {
    const { batchSize } = this.ctx.config.workers;
    const pollIntervalMs = this.control.pollIntervalMs();
    const budget = this.#budget.value;
    const inFlight = this.#fair.inFlight;
    const unrecorded = this.#buffer.length + this.#recording;
    const free = this.#free();
    // Leased already (a key's next, let go by its head's outcome): no claim needed, no batch to wait for.
    if (this.#ready.length > 0 && free > 0) return this.#start(this.#ready.splice(0, free));
    // Claim in reasonable batches: with a busy pool, wait for half a batch of free slots.
    if (inFlight + unrecorded + this.#starting > 0 && free < Math.min(batchSize, budget) / 2) {
      // A full pool with more work waiting, its requests waiting on the network: a bigger one would help.
      if (this.#backlog && this.#fair.mostlyWaiting(this.#budget.lagMs)) this.#budget.press();
      return this.#nextSlot();
    }
    const limit = Math.min(batchSize, free);
    let work: ClaimedWork;
    this.#fair.claimed(); // whatever an earlier claim that handed nothing out left counted
    let share: PoolShare;
    try {
      // Reading the endpoints may fail like any claim (the database is away): back off the same way.
      share = this.#share(limit, await this.ctx.cache.recent());
      this.#claiming = true;
      work = await claimWork(this.ctx, limit, share);
      this.#errorBackoff = 0;
    } catch (error) {
      return this.#backOff(error, "claiming work");
    } finally {
      this.#claiming = false;
    }
    if (share.heldBackWaiting()) this.#budget.press();
    // Fan-out queued deliveries for want of room here: they are due now, for whoever has room.
    if (share.heldBack() > 0) this.#due.expect(this.ctx.clock.now());
    const claimed = work.deliveries;
    if (work.fannedOut > 0) {
      this.#degree = 0.8 * this.#degree + 0.2 * Math.max(1, work.created / work.fannedOut);
      const started = work.created === 0 ? 1 : work.started / work.created;
      this.#admitted = 0.5 * this.#admitted + 0.5 * started;
      this.#lastAdmitted = started;
    }
    this.#backlog = claimed.length + work.startedEarly >= limit;
    this.#fanoutBacklog = work.fanoutFull;
    if (claimed.length === 0) {
      if (work.startedEarly > 0) return;
      // Until the next poll, or until work this worker recorded falls due, if sooner.
      const idleMs = this.#due.idleMs(pollIntervalMs);
      if (this.#fair.inFlight === 0) {
        // Fan-out queued everything it claimed (endpoints with limits): there may be more to fan out.
        return work.fannedOut > 0 ? undefined : this.control.sleep(idleMs);
      }
      // Nothing here has room: a finishing request may give a saturated endpoint room again.
      return Promise.race([this.#nextSlot(), this.control.sleep(idleMs)]);
    }
    return this.#start(claimed);
  }

  /** Slots of the pool nothing holds: not in flight, not awaiting its outcome's write, not being started. */
  #free(): number {
    // A delivery holds its slot until its outcome is written, not just until its answer: what a
    // crash loses (and so sends again) is bounded by the budget, not by the budget plus a group commit.
    const unrecorded = this.#buffer.length + this.#recording;
    // Deliveries a claim started early are the pool's from that moment, not once their slots are taken.
    return this.#budget.value - this.#fair.inFlight - unrecorded - this.#starting;
  }

  /**
   * New messages were sent (a local `send()`, a notification from another process). An idle pipeline
   * claims them at once; a busy one when its current claim ends. That claim is quick when it starts
   * what it fans out, but while fan-out turns a backlog into rows that cannot start yet (a hot key's
   * messages behind its head, or an endpoint at its share: `#admitted` low), a claim is long and its
   * work helps nobody now (as the last claim, or the recent ones, show). Then a small claim of the
   * messages sent in the last 250 ms alone runs beside it, one at a time, another after it when more
   * news came meanwhile: a message sent beside a hot key's backlog does not wait for its fan-out.
   */
  expedite(): void {
    if (!this.#claiming || !this.control.running()) return;
    // Fan-out starts most of what it makes: the main claim is quick, and takes the news itself.
    if (Math.min(this.#admitted, this.#lastAdmitted) >= EXPRESS_BELOW) return;
    if (this.#expressing) {
      this.#expressAgain = true;
      return;
    }
    const limit = Math.min(this.#free(), EXPRESS_MESSAGES);
    if (limit <= 0) return;
    this.#expressing = true;
    this.#expressAgain = false;
    // Its deliveries are the pool's from now on: the main claim, sizing the next, counts them.
    this.#starting += limit;
    void this.#express(limit).finally(() => {
      this.#starting -= limit;
      this.#expressing = false;
      this.#wake();
      if (this.#expressAgain) this.expedite();
    });
  }

  async #express(limit: number): Promise<void> {
    let fanned: FanoutPass;
    try {
      const share = this.#share(limit, await this.ctx.cache.recent());
      fanned = await fanOut(this.ctx, limit, {
        admit: share.admit,
        present: share.present,
        startNow: share.startNow,
        newestOnly: true,
      });
    } catch (error) {
      // The main claim meets the same failure and backs off; what this leased lapses with its lease.
      this.ctx.events.emit("error", { error, context: "claiming work" });
      return;
    }
    if (fanned.deliveries.length > 0) await this.#start(fanned.deliveries);
  }

  /**
   * Work was put back in storage due now by something other than this worker's claims and outcomes
   * (a replay, a skipped key, an endpoint enabled): the next claim looks for due work.
   */
  dueNow(): void {
    this.#due.expect(this.ctx.clock.now());
  }

  /** Plans claimed deliveries and starts those with room; the rest go back to storage, due now. */
  async #start(claimed: ClaimedDelivery[]): Promise<void> {
    for (const c of claimed) this.#leased.set(c.delivery.id, c);
    let plans: Awaited<ReturnType<typeof planBatch>>;
    try {
      plans = await planBatch(this.ctx, claimed);
    } catch (error) {
      // Unplanned claims stay leased and are simply due again when their lease expires.
      for (const c of claimed) this.#leased.delete(c.delivery.id);
      return this.#backOff(error, "planning deliveries");
    }
    const bodies = new Map<string, Uint8Array>();
    const now = this.ctx.clock.now();
    this.#fair.present(claimed.map((c) => c.delivery.endpointId));
    for (const p of plans) {
      if (p.kind === "skip") {
        this.#buffer.push(skipped(p));
        continue;
      }
      const endpointId = p.endpoint.record.id;
      const { maxInFlight } = p.endpoint.limits;
      if (this.#fair.room(endpointId, maxInFlight) <= 0) {
        // Over its share (a due retry claimed before the endpoint filled up): back to storage, due
        // now, for a worker with room. Not an attempt: no retry spent, no attempt row.
        this.#fair.heldBack(endpointId);
        const outcome = outcomeOf(p.claimed, { kind: "deferred", nextAttemptAt: now }, null);
        this.#buffer.push({ claimed: p.claimed, outcome, reason: null, probeSlot: null });
        continue;
      }
      this.#fair.acquire(endpointId, maxInFlight);
      // The key's next delivery may come back leased with this one's outcome: its slot is this one's,
      // on an endpoint without limits (whose work only claimLimited leases).
      const leaseNext = p.claimed.delivery.orderingKey !== undefined && !isLimited(p.endpoint);
      void deliver(this.ctx, p.claimed, p.endpoint, bodies, p.probeSlot).then(
        (result) => {
          if (leaseNext) result.outcome.leaseNext = true;
          this.#finished(endpointId, result, answeredIn(result));
        },
        (error: unknown) => this.#finished(endpointId, null, null, p.claimed, error),
      );
    }
    this.#fair.claimed();
    this.#flush();
  }

  /**
   * How this claim shares the pool: its fan-out size, which deliveries fan-out starts now (endpoints
   * with room and no limits), whose due work stays in storage (saturated and limited endpoints), and
   * what to ask `claimLimited` for.
   */
  #share(limit: number, endpoints: ReadonlyMap<string, CompiledEndpoint>): PoolShare {
    const fair = this.#fair;
    const admitted = new Map<string, number>();
    // Deliveries fan-out queued because their endpoint was at its share; whether one of those waits on
    // the network (then a bigger pool would deliver more).
    const lagMs = this.#budget.lagMs;
    let heldBack = 0;
    let heldBackWaiting = false;
    const limited = limitedEndpoints(endpoints);
    const skipEndpoints = fair.saturated();
    for (const endpoint of limited) skipEndpoints.push(endpoint.record.id);
    let left = limit;
    const claims = limited.map((endpoint) => {
      const want = Math.max(0, Math.min(left, fair.room(endpoint.record.id, endpoint.limits.maxInFlight)));
      left -= want;
      return limitedClaim(endpoint, want);
    });
    // Fan-out starts most of what it creates (a few deliveries wait behind a retrying head, or are
    // queued): enough messages to start the room's worth. Below, it shrinks with the share started,
    // so a backlog that cannot start yet (a hot key's, an endpoint's at its share) is not turned into
    // rows ahead of everything sent after it. (Times the share alone, as below, a failing endpoint of
    // ten made every claim start 0.81 of the room: a third more claims, and due work looked for in each.)
    const share = this.#admitted;
    const wanted = share >= MOSTLY_STARTED ? limit / (this.#degree * share) : (limit * share) / this.#degree;
    const messages = Math.max(1, Math.min(this.ctx.config.workers.batchSize, Math.ceil(wanted)));
    return {
      messages,
      present: (ids) => fair.present(ids),
      admit(endpoint) {
        const id = endpoint.record.id;
        // Only `claimLimited` may lease a limited endpoint's work: every worker's leases count there.
        if (isLimited(endpoint)) return false;
        const taken = admitted.get(id) ?? 0;
        if (fair.room(id) - taken <= 0) {
          fair.heldBack(id);
          heldBack++;
          heldBackWaiting ||= fair.waiting(id, lagMs);
          return false;
        }
        admitted.set(id, taken + 1);
        return true;
      },
      heldBack: () => heldBack,
      heldBackWaiting: () => heldBackWaiting,
      skipEndpoints,
      catchUp: this.#fanoutBacklog ? Math.max(1, Math.floor(messages / 4)) : 0,
      due: this.#due,
      // Messages sent straight from the outbox start before the rest of the claim is written.
      startNow: (deliveries) => {
        this.#starting += deliveries.length;
        void this.#start(deliveries).finally(() => {
          this.#starting -= deliveries.length;
          this.#wake();
        });
      },
      limited: claims,
    };
  }

  #finished(
    endpointId: string,
    result: DeliveryResult | null,
    latencyMs: number | null,
    claimed?: ClaimedDelivery,
    error?: unknown,
  ): void {
    this.#fair.release(endpointId, latencyMs);
    this.#budget.completed();
    if (result) this.#buffer.push(result);
    else if (claimed) {
      // deliver() catches network failures as values; this is a bug, not an outcome. The lease lapses.
      this.#leased.delete(claimed.delivery.id);
      this.ctx.events.emit("error", { error, context: "delivering" });
    }
    this.#flush();
    this.#wake();
  }

  #wake(): void {
    const wake = this.#slotFreed;
    this.#slotFreed = null;
    wake?.();
  }

  #nextSlot(): Promise<void> {
    return new Promise((resolve) => {
      this.#slotFreed = resolve;
    });
  }

  /**
   * Records buffered outcomes, in batches: at once when a batch is full or nothing is in flight,
   * otherwise after a short linger so finished deliveries share a write. One flush runs at a time;
   * when it ends, the next is considered.
   */
  #flush(force = false): void {
    if (this.#flushing || this.#buffer.length === 0) return;
    const full = this.#buffer.length >= this.ctx.config.workers.batchSize;
    if (!force && !full && this.#fair.inFlight > 0 && this.control.running()) {
      this.#linger ??= this.ctx.clock.setTimer(() => {
        this.#linger = null;
        this.#flush(true);
      }, LINGER_MS);
      return;
    }
    this.#linger?.cancel();
    this.#linger = null;
    const batch = this.#buffer.splice(0, MAX_FLUSH);
    this.#recording = batch.length;
    const now = this.ctx.clock.now();
    const next = this.control.running()
      ? { owner: this.ctx.config.workers.id, until: now + this.ctx.config.workers.leaseDurationMs }
      : undefined;
    this.#flushing = recordResults(this.ctx, batch, this.#summary, next)
      .then(
        (nextLeased) => {
          let keyed = false;
          for (const r of batch) {
            this.#leased.delete(r.outcome.deliveryId);
            keyed ||= r.outcome.orderingKey !== undefined;
            this.#expectDue(r.outcome, nextLeased !== undefined);
          }
          const leased = nextLeased ?? [];
          for (const c of leased) this.#leased.set(c.delivery.id, c);
          if (!this.control.running()) this.#release(leased);
          else this.#ready.push(...leased);
          // An ordered delivery that ended let its key's next one go: start it (or claim it, when it
          // came back unleased) now, not at the next poll.
          if (keyed) this.control.wake();
        },
        async (error: unknown) => {
          // Keep the outcomes and try again: the leases are still renewed meanwhile.
          this.#buffer.unshift(...batch);
          await this.#backOff(error, "recording outcomes");
        },
      )
      .finally(() => {
        this.#flushing = null;
        this.#recording = 0;
        // Written outcomes free their slots.
        this.#wake();
        // After stop(), run() drives the last flushes (bounded), so a dead database cannot spin here.
        if (this.control.running()) this.#flush();
      });
  }

  /**
   * When a recorded outcome leaves work due in storage: a retry or deferral; a key's next delivery,
   * let go unleased (its outcome did not ask for the lease, or storage leases none: `leasesNext`).
   */
  #expectDue(outcome: DeliveryOutcome, leasesNext: boolean): void {
    const { transition } = outcome;
    if ("nextAttemptAt" in transition) this.#due.expect(transition.nextAttemptAt);
    else if (outcome.orderingKey !== undefined && !(leasesNext && outcome.leaseNext === true)) {
      this.#due.expect(this.ctx.clock.now());
    }
  }

  /** Gives leased deliveries that will not be started back to storage, due now (no attempt, no retry spent). */
  #release(claimed: ClaimedDelivery[]): void {
    const now = this.ctx.clock.now();
    for (const c of claimed) {
      const outcome = outcomeOf(c, { kind: "deferred", nextAttemptAt: now }, null);
      this.#buffer.push({ claimed: c, outcome, reason: null, probeSlot: null });
    }
  }

  async #flushAll(): Promise<void> {
    for (let round = 0; (this.#flushing || this.#buffer.length > 0) && round < 10; round++) {
      this.#flush(true);
      await this.#flushing;
    }
  }

  async #backOff(error: unknown, context: string): Promise<void> {
    this.ctx.events.emit("error", { error, context });
    // While the database is unusable (restarting, failing over, on a standby), probe often: each try
    // is cheap (a refused connect or a read-only error), and delivery resumes within a probe of the
    // new primary taking writes. Other failures back off up to 30 s.
    const outage = isStorageOutage(error);
    const first = this.ctx.config.workers.pollIntervalMs;
    this.#errorBackoff = outage
      ? Math.min(OUTAGE_PROBE_MAX_MS, Math.max(Math.min(first, OUTAGE_PROBE_MIN_MS), this.#errorBackoff * 2))
      : Math.min(MAX_ERROR_BACKOFF_MS, Math.max(first, this.#errorBackoff * 2));
    await this.control.sleep(this.#errorBackoff);
  }
}

/** How long the receiver took to answer, or null when it did not (timeout, network error). */
function answeredIn(result: DeliveryResult): number | null {
  const attempt = result.outcome.attempt;
  return attempt !== undefined && attempt.statusCode !== null ? attempt.latencyMs : null;
}
