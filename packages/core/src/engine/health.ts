import type { Clock } from "../clock.js";
import { formatDuration } from "../duration.js";
import { type EndpointStore, HEALTH_BUCKET_MS } from "../storage/storage.js";
import type { AutoDisableSettings, CircuitBreakerSettings } from "../storage/records.js";
import type { DeliveryResult } from "./deliver.js";
import type { CompiledEndpoint, EndpointCache } from "./endpoint-cache.js";
import type { Emitter } from "./events.js";

/**
 * Runs the endpoint state machine after a batch is recorded: a probe closes or re-opens its circuit;
 * failures may open the circuit (failure ratio over the breaker window since the last transition),
 * and an endpoint broken for long is disabled (see `#disableIfBrokenForLong`). Every transition is a
 * compare-and-set in storage, so when several instances race exactly one wins and emits the event.
 */
export class HealthMonitor {
  constructor(
    private readonly storage: EndpointStore,
    private readonly clock: Clock,
    private readonly events: Emitter,
    private readonly cache: EndpointCache,
  ) {}

  async afterBatch(
    results: readonly DeliveryResult[],
    endpoints: ReadonlyMap<string, CompiledEndpoint>,
  ): Promise<void> {
    // Endpoints with a failed attempt in the batch, and whether one of those was a failed probe.
    const failing = new Map<string, boolean>();
    for (const result of results) {
      const { attempt } = result.outcome;
      if (!attempt) continue;
      const endpointId = result.claimed.delivery.endpointId;
      const succeeded = attempt.outcome === "success";
      if (result.probeSlot !== null) {
        await this.#settleProbe(endpoints.get(endpointId), result.probeSlot, succeeded);
      }
      if (!succeeded) failing.set(endpointId, failing.get(endpointId) === true || result.probeSlot !== null);
    }
    for (const [endpointId, probeFailed] of failing) {
      const endpoint = endpoints.get(endpointId);
      if (endpoint) await this.#evaluate(endpoint, probeFailed);
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

  /**
   * The breaker gets the first word. With a breaker, auto-disable is only looked at when the circuit
   * just opened or a probe just failed, so an endpoint is never disabled straight from `active`.
   */
  async #evaluate(endpoint: CompiledEndpoint, probeFailed: boolean): Promise<void> {
    const breaker = endpoint.circuitBreaker;
    const opened =
      breaker !== null && endpoint.record.state === "active" && (await this.#open(endpoint, breaker));
    if (!endpoint.autoDisable || (breaker && !opened && !probeFailed)) return;
    await this.#disableIfBrokenForLong(endpoint.record.id, endpoint.autoDisable, breaker);
  }

  async #open(endpoint: CompiledEndpoint, breaker: CircuitBreakerSettings): Promise<boolean> {
    const now = this.clock.now();
    const id = endpoint.record.id;
    // Count only since the last transition (from its bucket on), so a circuit that just closed starts afresh.
    const lastChange = Math.floor(endpoint.record.updatedAt / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
    const stats = await this.storage.endpointHealth(id, Math.max(now - breaker.windowMs, lastChange));
    const rate = stats.attempts === 0 ? 0 : stats.failures / stats.attempts;
    if (stats.attempts < breaker.minimumVolume || rate < breaker.threshold) return false;
    const until = now + breaker.cooldownMs;
    const won = await this.storage.transitionEndpoint(
      id,
      { state: "active", circuitOpenUntil: null },
      { state: "circuit-open", circuitOpenUntil: until, disabledReason: null },
      now,
    );
    if (!won) return false;
    this.cache.invalidate();
    this.events.emit("circuit-open", { endpointId: id, until, failureRate: rate });
    return true;
  }

  /**
   * Auto-disable means "broken for long". Over the window [now − W, now] the failure ratio must reach
   * `failureRate` with enough attempts, and the head of the window must be failing too: it was already
   * failing a whole window ago. With a breaker the endpoint must be circuit-open, and since an open
   * circuit lets one probe through per cooldown, the attempts needed are capped at W / cooldown and the
   * head is long enough (two cooldowns and a bucket) to hold a probe.
   */
  async #disableIfBrokenForLong(
    id: string,
    settings: AutoDisableSettings,
    breaker: CircuitBreakerSettings | null,
  ): Promise<void> {
    // The current row, not the cached one: it may be a batch old.
    const current = await this.storage.getEndpoint(id);
    if (!current || current.state === "disabled" || (breaker && current.state !== "circuit-open")) return;
    const now = this.clock.now();
    const { windowMs, failureRate, minAttempts } = settings;
    const since = now - windowMs;
    const window = await this.storage.endpointHealth(id, since);
    const minVolume = breaker
      ? Math.min(minAttempts, Math.max(1, Math.floor(windowMs / breaker.cooldownMs)))
      : minAttempts;
    if (window.attempts < minVolume || window.failures / window.attempts < failureRate) return;

    const headMs = breaker
      ? Math.min(windowMs, Math.max(windowMs / 10, 2 * breaker.cooldownMs) + HEALTH_BUCKET_MS)
      : Math.max(windowMs / 10, HEALTH_BUCKET_MS);
    const rest = await this.storage.endpointHealth(id, since + headMs);
    const head = { attempts: window.attempts - rest.attempts, failures: window.failures - rest.failures };
    if (head.failures < 1 || head.failures / head.attempts < failureRate) return;

    // Its failures go back at least to the end of the head: that much is certain, bucket edges aside.
    const reason = `auto-disabled: failing for over ${formatDuration(windowMs - headMs)}: ${window.failures}/${window.attempts} attempts failed in the last ${formatDuration(windowMs)}`;
    const won = await this.storage.transitionEndpoint(
      id,
      { state: current.state, circuitOpenUntil: current.circuitOpenUntil },
      { state: "disabled", circuitOpenUntil: null, disabledReason: reason },
      now,
    );
    if (!won) return;
    this.cache.invalidate();
    this.events.emit("endpoint-disabled", { endpointId: id, reason });
  }
}
