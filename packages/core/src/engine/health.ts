import type { Clock } from "../clock.js";
import { HEALTH_BUCKET_MS, type Storage } from "../storage/storage.js";
import type { DeliveryResult } from "./deliver.js";
import type { CompiledEndpoint, EndpointCache } from "./endpoint-cache.js";
import type { Emitter } from "./events.js";

/**
 * Runs the endpoint state machine after a batch is recorded: a probe closes or re-opens its circuit;
 * failures may open the circuit (failure ratio over the breaker window since the last transition) or
 * disable the endpoint (ratio over the auto-disable window). Every transition is a compare-and-set in
 * storage, so when several instances race exactly one wins and emits the event.
 */
export class HealthMonitor {
  constructor(
    private readonly storage: Storage<unknown>,
    private readonly clock: Clock,
    private readonly events: Emitter,
    private readonly cache: EndpointCache,
  ) {}

  async afterBatch(
    results: readonly DeliveryResult[],
    endpoints: ReadonlyMap<string, CompiledEndpoint>,
  ): Promise<void> {
    const failing = new Set<string>();
    for (const result of results) {
      const { attempt } = result.outcome;
      if (!attempt) continue;
      const endpointId = result.claimed.delivery.endpointId;
      if (result.probeSlot !== null) {
        await this.#settleProbe(endpoints.get(endpointId), result.probeSlot, attempt.outcome === "success");
      }
      if (attempt.outcome !== "success") failing.add(endpointId);
    }
    for (const endpointId of failing) {
      const endpoint = endpoints.get(endpointId);
      if (endpoint) await this.#evaluate(endpoint);
    }
  }

  async #settleProbe(
    endpoint: CompiledEndpoint | undefined,
    slot: number,
    succeeded: boolean,
  ): Promise<void> {
    if (!endpoint) return;
    const now = this.clock.now();
    const id = endpoint.record.id;
    const cooldownMs = endpoint.circuitBreaker?.cooldownMs ?? 0;
    const next = succeeded
      ? { state: "active" as const, circuitOpenUntil: null, disabledReason: null }
      : { state: "circuit-open" as const, circuitOpenUntil: now + cooldownMs, disabledReason: null };
    const won = await this.storage.transitionEndpoint(
      id,
      { state: "circuit-open", circuitOpenUntil: slot },
      next,
      now,
    );
    if (!won) return;
    this.cache.invalidate();
    if (succeeded) this.events.emit("circuit-close", { endpointId: id });
    else this.events.emit("circuit-open", { endpointId: id, until: now + cooldownMs, failureRate: 1 });
  }

  async #evaluate(endpoint: CompiledEndpoint): Promise<void> {
    const now = this.clock.now();
    const id = endpoint.record.id;
    const disable = endpoint.autoDisable;
    if (disable) {
      const stats = await this.storage.endpointHealth(id, now - disable.windowMs);
      const rate = stats.attempts === 0 ? 0 : stats.failures / stats.attempts;
      if (stats.attempts >= disable.minAttempts && rate >= disable.failureRate) {
        const reason = `auto-disabled: ${stats.failures}/${stats.attempts} attempts failed in the last ${Math.round(disable.windowMs / 1000)}s`;
        if (
          await this.#transition(id, { state: "disabled", circuitOpenUntil: null, disabledReason: reason })
        ) {
          this.events.emit("endpoint-disabled", { endpointId: id, reason });
        }
        return;
      }
    }
    const breaker = endpoint.circuitBreaker;
    if (!breaker || endpoint.record.state !== "active") return;
    // Count only since the last transition (from its bucket on), so a circuit that just closed starts afresh.
    const lastChange = Math.floor(endpoint.record.updatedAt / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
    const stats = await this.storage.endpointHealth(id, Math.max(now - breaker.windowMs, lastChange));
    const rate = stats.attempts === 0 ? 0 : stats.failures / stats.attempts;
    if (stats.attempts < breaker.minimumVolume || rate < breaker.threshold) return;
    const until = now + breaker.cooldownMs;
    const won = await this.storage.transitionEndpoint(
      id,
      { state: "active", circuitOpenUntil: null },
      { state: "circuit-open", circuitOpenUntil: until, disabledReason: null },
      now,
    );
    if (won) {
      this.cache.invalidate();
      this.events.emit("circuit-open", { endpointId: id, until, failureRate: rate });
    }
  }

  /** Compare-and-set against the endpoint's current row (the cached one may be a batch old). */
  async #transition(
    id: string,
    next: { state: "disabled"; circuitOpenUntil: null; disabledReason: string },
  ): Promise<boolean> {
    const current = await this.storage.getEndpoint(id);
    if (!current || current.state === "disabled") return false;
    const won = await this.storage.transitionEndpoint(
      id,
      { state: current.state, circuitOpenUntil: current.circuitOpenUntil },
      next,
      this.clock.now(),
    );
    if (won) this.cache.invalidate();
    return won;
  }
}
