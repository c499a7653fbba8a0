import type {
  EndpointFields,
  EndpointRecord,
  EndpointSecret,
  EndpointState,
  HealthStats,
} from "../records.js";
import type { EndpointQuery } from "../storage.js";
import { compare, copy, type MemoryState } from "./state.js";

/** Endpoint verbs of `InMemoryStorage`. */
export class MemoryEndpoints {
  readonly #state: MemoryState;

  constructor(state: MemoryState) {
    this.#state = state;
  }

  async createEndpoint(endpoint: EndpointRecord): Promise<void> {
    this.#state.endpoints.set(endpoint.id, { record: copy(endpoint), deleted: false });
    this.#state.endpointsRevision += 1;
  }

  async getEndpoint(id: string): Promise<EndpointRecord | null> {
    const row = this.#state.liveEndpoint(id);
    return row ? copy(row.record) : null;
  }

  /** Oldest first (by id, which core generates time-sortable), after the `after` id. */
  async listEndpoints(query: EndpointQuery): Promise<EndpointRecord[]> {
    return this.#live()
      .filter(
        (endpoint) =>
          (query.tenantId === undefined || endpoint.tenantId === query.tenantId) &&
          (query.state === undefined || endpoint.state === query.state) &&
          (query.after === undefined || compare(endpoint.id, query.after) > 0),
      )
      .slice(0, Math.max(0, query.limit))
      .map(copy);
  }

  async allEndpoints(): Promise<EndpointRecord[]> {
    return this.#live().map(copy);
  }

  async endpointsRevision(): Promise<number> {
    return this.#state.endpointsRevision;
  }

  async updateEndpoint(
    id: string,
    fields: Partial<EndpointFields>,
    now: number,
  ): Promise<EndpointRecord | null> {
    const row = this.#state.liveEndpoint(id);
    if (!row) return null;
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined) Object.assign(row.record, { [key]: copy(value) });
    }
    row.record.updatedAt = now;
    this.#state.endpointsRevision += 1;
    return copy(row.record);
  }

  async deleteEndpoint(id: string, now: number): Promise<boolean> {
    const row = this.#state.liveEndpoint(id);
    if (!row) return false;
    row.deleted = true;
    this.#state.endpointsRevision += 1;
    const open = [...this.#state.pending, ...(this.#state.heldByEndpoint.get(id) ?? [])];
    for (const waiting of this.#state.keyWaiting.values()) {
      if (waiting[0]?.endpointId === id) open.push(...waiting.map((delivery) => delivery.id));
    }
    for (const [key, hold] of this.#state.heldKeys)
      if (hold.endpointId === id) this.#state.heldKeys.delete(key);
    const touched = new Set<string>();
    for (const deliveryId of open) {
      const delivery = this.#state.deliveries.get(deliveryId)!;
      if (delivery.endpointId !== id) continue;
      this.#state.setDeliveryStatus(delivery, "cancelled");
      delivery.leaseToken = null;
      delivery.leaseOwner = null;
      delivery.updatedAt = now;
      touched.add(delivery.messageId);
    }
    this.#state.finaliseMessages(touched, now);
    return true;
  }

  async transitionEndpoint(
    id: string,
    expected: { state: EndpointState; circuitOpenUntil: number | null },
    next: { state: EndpointState; circuitOpenUntil: number | null; disabledReason: string | null },
    now: number,
  ): Promise<boolean> {
    const endpoint = this.#state.liveEndpoint(id)?.record;
    if (!endpoint) return false;
    if (endpoint.state !== expected.state || endpoint.circuitOpenUntil !== expected.circuitOpenUntil) {
      return false;
    }
    endpoint.state = next.state;
    endpoint.circuitOpenUntil = next.circuitOpenUntil;
    endpoint.disabledReason = next.disabledReason;
    endpoint.updatedAt = now;
    this.#state.endpointsRevision += 1;
    return true;
  }

  async addEndpointSecret(id: string, secret: EndpointSecret, previousExpireAt: number): Promise<void> {
    const endpoint = this.#state.liveEndpoint(id)?.record;
    if (!endpoint) return;
    for (const older of endpoint.secrets) older.expiresAt ??= previousExpireAt;
    endpoint.secrets.unshift(copy(secret));
    // Fan-out caches endpoints (secrets included) by revision, so a new secret is a change too.
    this.#state.endpointsRevision += 1;
  }

  async endpointHealth(id: string, since: number): Promise<HealthStats> {
    return this.#state.healthSince(id, since);
  }

  #live(): EndpointRecord[] {
    const live: EndpointRecord[] = [];
    for (const row of this.#state.endpoints.values()) if (!row.deleted) live.push(row.record);
    return live.sort((a, b) => compare(a.id, b.id));
  }
}
