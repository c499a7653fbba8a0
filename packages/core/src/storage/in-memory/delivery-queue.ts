import { randomUUID } from "node:crypto";
import { smallest } from "./smallest.js";
import type { ClaimedDelivery, DeliveryRecord, HealthStats, NewDelivery } from "../records.js";
import type {
  DeliveryOutcome,
  DeliveryTransition,
  DueClaim,
  LeaseRequest,
  LimitedClaim,
  NextLease,
  RecordOutcomesResult,
} from "../storage.js";
import { deliveryStatusOf, isTerminal } from "../rules.js";
import { bucketTokens, HEALTH_BUCKET_MS } from "../storage.js";
import { compare, copy, keyOf, type MemoryState, pendingDelivery } from "./state.js";

/** Delivery-queue verbs of `InMemoryStorage`. */
export class MemoryDeliveryQueue {
  readonly #state: MemoryState;

  constructor(state: MemoryState) {
    this.#state = state;
  }

  async claimDue(lease: DueClaim): Promise<ClaimedDelivery[]> {
    const skip = new Set(lease.skipEndpoints);
    // Only the pending set is scanned, never history; an expired lease is simply due.
    const dueNow = function* (state: MemoryState) {
      for (const id of state.pending) {
        const delivery = state.deliveries.get(id)!;
        if (delivery.nextAttemptAt <= lease.now && !skip.has(delivery.endpointId)) yield delivery;
      }
    };
    const due = smallest(
      dueNow(this.#state),
      lease.limit,
      (a, b) => a.nextAttemptAt - b.nextAttemptAt || compare(a.id, b.id),
    );
    return due.map((delivery) => this.#lease(delivery, lease));
  }

  async claimLimited(claims: LimitedClaim[], lease: Omit<LeaseRequest, "limit">): Promise<ClaimedDelivery[]> {
    const claimed: ClaimedDelivery[] = [];
    for (const claim of claims) {
      const leased: DeliveryRecord[] = [];
      const due: DeliveryRecord[] = [];
      for (const id of this.#state.pending) {
        const delivery = this.#state.deliveries.get(id)!;
        if (delivery.endpointId !== claim.endpointId) continue;
        if (delivery.nextAttemptAt <= lease.now) due.push(delivery);
        else if (delivery.leaseToken !== null) leased.push(delivery);
      }
      const bucket = this.#state.rateBuckets.get(claim.endpointId);
      const tokens =
        claim.rateLimit === null
          ? Number.POSITIVE_INFINITY
          : bucketTokens(bucket?.tokens ?? null, bucket?.at ?? lease.now, claim.rateLimit, lease.now);
      const room = claim.maxInFlight === null ? claim.want : claim.maxInFlight - leased.length;
      const granted = smallest(
        due,
        Math.max(0, Math.min(claim.want, room, Math.floor(tokens))),
        (a, b) => a.nextAttemptAt - b.nextAttemptAt || compare(a.id, b.id),
      );
      if (claim.rateLimit !== null) {
        this.#state.rateBuckets.set(claim.endpointId, { tokens: tokens - granted.length, at: lease.now });
      }
      for (const delivery of granted) claimed.push(this.#lease(delivery, lease));
    }
    return claimed;
  }

  #lease(delivery: DeliveryRecord, lease: Omit<LeaseRequest, "limit">): ClaimedDelivery {
    const leaseToken = randomUUID();
    delivery.leaseToken = leaseToken;
    delivery.leaseOwner = lease.owner;
    delivery.nextAttemptAt = lease.until;
    delivery.updatedAt = lease.now;
    const message = this.#state.messages.get(delivery.messageId)!.record;
    return { delivery: copy(delivery), message: copy(message), leaseToken };
  }

  async renewLeases(leases: { deliveryId: string; leaseToken: string }[], until: number): Promise<string[]> {
    const lost: string[] = [];
    for (const { deliveryId, leaseToken } of leases) {
      const delivery = this.#held(deliveryId, leaseToken);
      if (delivery) delivery.nextAttemptAt = until;
      else lost.push(deliveryId);
    }
    return lost;
  }

  async recordOutcomes(
    outcomes: DeliveryOutcome[],
    now: number,
    next?: NextLease,
  ): Promise<RecordOutcomesResult> {
    const result: RecordOutcomesResult = { recorded: [], leaseLost: [] };
    const leased: ClaimedDelivery[] = [];
    const touched = new Set<string>();
    for (const outcome of outcomes) {
      const delivery = outcome.newDelivery
        ? this.#insertDirect(outcome.newDelivery, outcome.leaseToken, now)
        : this.#held(outcome.deliveryId, outcome.leaseToken);
      if (!delivery) {
        result.leaseLost.push(outcome.deliveryId);
        continue;
      }
      delivery.leaseToken = null;
      delivery.leaseOwner = null;
      delivery.updatedAt = now;
      this.#apply(delivery, outcome.transition);
      if (outcome.lastError !== undefined) delivery.lastError = outcome.lastError;
      const freed = this.#afterKeyed(delivery, outcome, now);
      // ORDERING_RULES.leaseNext: the delivery this end let go goes to the recorder, leased.
      if (freed !== undefined && next !== undefined && outcome.leaseNext === true)
        leased.push(this.#lease(freed, { owner: next.owner, now, until: next.until }));
      if (outcome.attempt) {
        delivery.attemptsMade += 1;
        this.#recordAttempt(delivery, outcome);
      }
      touched.add(delivery.messageId);
      result.recorded.push(delivery.id);
    }
    this.#state.finaliseMessages(touched, now);
    // It leases every next a leaseNext outcome lets go: `next` is there whenever it was asked to.
    if (next !== undefined) result.next = leased;
    return result;
  }

  async releaseHeld(endpointId: string, now: number): Promise<number> {
    const held = [...(this.#state.heldByEndpoint.get(endpointId) ?? [])];
    for (const id of held) {
      const delivery = this.#state.deliveries.get(id)!;
      this.#state.setDeliveryStatus(delivery, "pending");
      delivery.nextAttemptAt = now;
      delivery.updatedAt = now;
    }
    return held.length;
  }

  /**
   * `ORDERING_RULES.nextOnEnd`: a keyed delivery that ended holds its key or lets the next one go;
   * returns the one it let go.
   */
  #afterKeyed(delivery: DeliveryRecord, outcome: DeliveryOutcome, now: number): DeliveryRecord | undefined {
    const key = delivery.orderingKey;
    if (key === undefined || !isTerminal(delivery.status)) return undefined;
    if (outcome.holdKey === true) {
      this.#state.heldKeys.set(keyOf(delivery.endpointId, key), {
        endpointId: delivery.endpointId,
        orderingKey: key,
        deliveryId: delivery.id,
        heldAt: now,
      });
      return undefined;
    }
    return this.#state.settleKey(delivery.endpointId, key, now);
  }

  /**
   * A direct delivery's row, inserted `pending` and its message marked fanned out, when `token` still
   * holds the un-fanned message; else undefined (lease lost).
   */
  #insertDirect(fresh: NewDelivery, token: string, now: number): DeliveryRecord | undefined {
    const row = this.#state.messages.get(fresh.messageId);
    if (!row || row.fanoutToken !== token || !this.#state.unfanned.has(fresh.messageId)) return undefined;
    this.#state.markFanned(row.record);
    row.fanoutToken = null;
    row.record.fannedOutAt = now;
    const delivery = pendingDelivery(fresh, now, now);
    const key = fresh.orderingKey;
    if (key !== undefined) {
      // ORDERING_RULES.directHead: behind a head a replay made meanwhile, it waits.
      const ref = keyOf(fresh.endpointId, key);
      if (this.#state.keyHeads.has(ref) || this.#state.heldKeys.has(ref)) delivery.status = "waiting";
      this.#state.unrefuse(key, now);
    }
    this.#state.insertDelivery(delivery);
    return delivery;
  }

  /** The delivery when `leaseToken` is still its current lease, else undefined (lease lost). */
  #held(deliveryId: string, leaseToken: string): DeliveryRecord | undefined {
    const delivery = this.#state.deliveries.get(deliveryId);
    const holds = delivery?.status === "pending" && delivery.leaseToken !== null;
    return holds && delivery.leaseToken === leaseToken ? delivery : undefined;
  }

  #apply(delivery: DeliveryRecord, transition: DeliveryTransition): void {
    switch (transition.kind) {
      case "retry":
        delivery.nextAttemptAt = transition.nextAttemptAt;
        delivery.retriesUsed = transition.retriesUsed;
        return;
      case "deferred":
        delivery.nextAttemptAt = transition.nextAttemptAt;
        return;
      default:
        this.#state.setDeliveryStatus(delivery, deliveryStatusOf(transition));
    }
  }

  #recordAttempt(delivery: DeliveryRecord, outcome: DeliveryOutcome): void {
    const attempt = copy(outcome.attempt!);
    const attempts = this.#state.attemptsByMessage.get(delivery.messageId);
    if (attempts) attempts.push(attempt);
    else this.#state.attemptsByMessage.set(delivery.messageId, [attempt]);

    const buckets = this.#state.health.get(delivery.endpointId) ?? new Map<number, HealthStats>();
    this.#state.health.set(delivery.endpointId, buckets);
    const start = Math.floor(attempt.startedAt / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
    const stats = buckets.get(start) ?? { attempts: 0, failures: 0 };
    stats.attempts += 1;
    if (attempt.outcome !== "success") stats.failures += 1;
    buckets.set(start, stats);
  }
}
