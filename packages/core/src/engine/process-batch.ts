import type { ClaimedDelivery } from "../storage/records.js";
import type { DeliveryOutcome, DeliveryTransition, NextLease } from "../storage/storage.js";
import { type DeliverContext, type DeliveryResult, deliver, outcomeOf } from "./deliver.js";
import type { CompiledEndpoint, EndpointCache } from "./endpoint-cache.js";
import type { Emitter } from "./events.js";
import type { HealthMonitor } from "./health.js";

/** Counts of what one batch did, by transition. */
export type BatchSummary = Record<DeliveryTransition["kind"] | "leaseLost", number>;

/** An empty summary. */
export function emptySummary(): BatchSummary {
  return {
    succeeded: 0,
    retry: 0,
    failed: 0,
    "dead-lettered": 0,
    expired: 0,
    deferred: 0,
    held: 0,
    cancelled: 0,
    leaseLost: 0,
  };
}

/** What processing a batch needs. */
export interface BatchContext extends DeliverContext {
  cache: EndpointCache;
  events: Emitter;
  health: HealthMonitor;
}

/**
 * Delivers a batch of leased deliveries concurrently, records every outcome in one storage call,
 * emits events for the outcomes storage accepted, and runs the endpoint state machine. Leases are
 * renewed while requests are in flight. (`drain()` works batch by batch; `start()` pipelines.)
 */
export async function processBatch(
  ctx: BatchContext,
  batch: ClaimedDelivery[],
  summary: BatchSummary,
): Promise<void> {
  if (batch.length === 0) return;
  const renewal = renewWhileWorking(ctx, () => batch);
  try {
    const plans = await planBatch(ctx, batch);
    const bodies = new Map<string, Uint8Array>();
    const results = await Promise.all(
      plans.map((p) =>
        p.kind === "send"
          ? deliver(ctx, p.claimed, p.endpoint, bodies, p.probeSlot)
          : Promise.resolve(skipped(p)),
      ),
    );
    await recordResults(ctx, results, summary);
  } finally {
    renewal.cancel();
  }
}

/**
 * Records delivered (or skipped) results in one storage call, then emits events and runs the
 * endpoint state machine for the outcomes storage accepted (a lost lease records nothing). Given
 * `next`, returns the deliveries storage leased with it (`ORDERING_RULES.leaseNext`): the caller
 * must deliver or release them. Undefined when storage leases none (what it let go is due now).
 */
export async function recordResults(
  ctx: BatchContext,
  results: DeliveryResult[],
  summary: BatchSummary,
  next?: NextLease,
): Promise<ClaimedDelivery[] | undefined> {
  if (results.length === 0) return [];
  const outcomes = results.map((result) => result.outcome);
  const now = ctx.clock.now();
  const {
    recorded,
    leaseLost,
    next: leased,
  } = next === undefined
    ? await ctx.config.storage.recordOutcomes(outcomes, now)
    : await ctx.config.storage.recordOutcomes(outcomes, now, next);
  summary.leaseLost += leaseLost.length;
  const accepted = new Set(recorded);
  const kept = results.filter((r) => accepted.has(r.outcome.deliveryId));
  for (const result of kept) {
    summary[result.outcome.transition.kind]++;
    emitOutcome(ctx.events, result);
  }
  ctx.events.recorded(kept);
  await ctx.health.afterBatch(kept, await ctx.cache.recent());
  return leased;
}

/** Decides, before any request, what happens to each claimed delivery (see `plan`). */
export async function planBatch(ctx: BatchContext, batch: ClaimedDelivery[]): Promise<Plan[]> {
  let endpoints = await ctx.cache.recent();
  // A delivery fanned out by another instance may name an endpoint newer than our cache.
  if (batch.some((c) => !endpoints.has(c.delivery.endpointId))) endpoints = await ctx.cache.fresh();
  return plan(ctx, batch, endpoints);
}

/** The result of a delivery that is not sent (expired, held, deferred, cancelled). */
export function skipped(p: Extract<Plan, { kind: "skip" }>): DeliveryResult {
  return { claimed: p.claimed, outcome: p.outcome, reason: null, probeSlot: null };
}

/** What happens to one claimed delivery. */
export type Plan =
  | { kind: "send"; claimed: ClaimedDelivery; endpoint: CompiledEndpoint; probeSlot: number | null }
  | { kind: "skip"; claimed: ClaimedDelivery; outcome: DeliveryOutcome };

/**
 * How long a delivery waits when its endpoint's credentials cannot be decrypted (a key missing, a KMS
 * away): it is never sent unsigned or with a wrong value, and it spends no retry meanwhile.
 */
const UNREADABLE_DEFER_MS = 60_000;

/** Decides, before any request, which deliveries are sent, and which are expired, held or deferred. */
async function plan(
  ctx: BatchContext,
  batch: ClaimedDelivery[],
  endpoints: ReadonlyMap<string, CompiledEndpoint>,
): Promise<Plan[]> {
  const now = ctx.clock.now();
  const probeSlots = new Map<string, { slot: number; retryAt: number; won: boolean; taken: boolean }>();
  const plans: Plan[] = [];
  const reported = new Set<string>();
  for (const claimed of batch) {
    const skip = (transition: DeliveryTransition): Plan => ({
      kind: "skip",
      claimed,
      outcome: outcomeOf(claimed, transition, null),
    });
    const endpoint = endpoints.get(claimed.delivery.endpointId);
    const { expiresAt } = claimed.message;
    if (!endpoint) plans.push(skip({ kind: "cancelled" }));
    else if (expiresAt !== null && now >= expiresAt) plans.push(skip({ kind: "expired" }));
    else if (endpoint.record.state === "disabled") plans.push(skip({ kind: "held" }));
    else if (endpoint.unreadable !== null) {
      if (!reported.has(endpoint.record.id)) {
        reported.add(endpoint.record.id);
        ctx.events.emit("error", {
          error: endpoint.unreadable,
          context: "reading an endpoint's credentials",
        });
      }
      plans.push(skip({ kind: "deferred", nextAttemptAt: now + UNREADABLE_DEFER_MS }));
    } else if (endpoint.record.state === "circuit-open") {
      const openUntil = endpoint.record.circuitOpenUntil ?? 0;
      if (now < openUntil) {
        plans.push(skip({ kind: "deferred", nextAttemptAt: openUntil }));
        continue;
      }
      let probe = probeSlots.get(endpoint.record.id);
      if (!probe) {
        // Exactly one instance wins the probe slot; it sends one request that decides the circuit.
        const slot = now + ctx.config.http.timeoutMs + 5_000;
        const won = await ctx.config.storage.transitionEndpoint(
          endpoint.record.id,
          { state: "circuit-open", circuitOpenUntil: openUntil },
          { state: "circuit-open", circuitOpenUntil: slot, disabledReason: null },
          now,
        );
        // The others wait one cooldown (the probe's verdict is in by then), never past the probe slot.
        const cooldownMs = endpoint.circuitBreaker?.cooldownMs ?? ctx.config.http.timeoutMs;
        probe = { slot, retryAt: Math.min(slot, now + cooldownMs), won, taken: false };
        probeSlots.set(endpoint.record.id, probe);
      }
      if (probe.won && !probe.taken) {
        probe.taken = true;
        plans.push({ kind: "send", claimed, endpoint, probeSlot: probe.slot });
      } else plans.push(skip({ kind: "deferred", nextAttemptAt: probe.retryAt }));
    } else plans.push({ kind: "send", claimed, endpoint, probeSlot: null });
  }
  if (probeSlots.size > 0) ctx.cache.invalidate();
  return plans;
}

function emitOutcome(events: Emitter, { claimed, outcome, reason }: DeliveryResult): void {
  const { delivery } = claimed;
  const { transition, attempt } = outcome;
  if (attempt) events.emit("attempt", attempt);
  if (transition.kind === "succeeded") {
    // The one event of every delivery: no payload is built when nobody listens.
    if (attempt && events.has("delivered")) {
      const { messageId, id: deliveryId, endpointId } = delivery;
      events.emit("delivered", { messageId, deliveryId, endpointId, attempt });
    }
    return;
  }
  const ids = { messageId: delivery.messageId, deliveryId: delivery.id, endpointId: delivery.endpointId };
  switch (transition.kind) {
    case "retry":
      events.emit("retry-scheduled", {
        ...ids,
        retry: transition.retriesUsed,
        nextAttemptAt: transition.nextAttemptAt,
        reason: reason ?? "failed",
      });
      break;
    case "failed":
    case "dead-lettered":
      events.emit("dead-letter", { ...ids, status: transition.kind, reason: reason ?? transition.kind });
      break;
  }
}

/** Renews, every half lease, the leases of whatever `current()` returns, until cancelled. */
export function renewWhileWorking(
  ctx: BatchContext,
  current: () => Iterable<ClaimedDelivery>,
): { cancel(): void } {
  const { config, clock } = ctx;
  const every = Math.floor(config.workers.leaseDurationMs / 2);
  let cancelled = false;
  let timer = clock.setTimer(renew, every);
  function renew(): void {
    if (cancelled) return;
    const until = clock.now() + config.workers.leaseDurationMs;
    const leases: { deliveryId: string; leaseToken: string }[] = [];
    const fanoutLeases: { messageId: string; token: string }[] = [];
    for (const c of current()) {
      if (c.direct) fanoutLeases.push({ messageId: c.message.id, token: c.leaseToken });
      else leases.push({ deliveryId: c.delivery.id, leaseToken: c.leaseToken });
    }
    const failed = (error: unknown) => ctx.events.emit("error", { error, context: "renewing leases" });
    if (leases.length > 0) config.storage.renewLeases(leases, until).catch(failed);
    if (fanoutLeases.length > 0) config.storage.direct?.renewFanoutLeases(fanoutLeases, until).catch(failed);
    timer = clock.setTimer(renew, every);
  }
  return {
    cancel() {
      cancelled = true;
      timer.cancel();
    },
  };
}
