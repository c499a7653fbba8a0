import type { AttemptRecord, DeliveryRecord, DeliveryStatus, MessageRecord } from "../records.js";
import type { MessageQuery, PageRequest } from "../storage.js";
import { compare, copy, type MemoryState } from "./state.js";

/** Audit reads of `InMemoryStorage`. Reads may scan history; claims never do. */
export class MemoryAudit {
  readonly #state: MemoryState;

  constructor(state: MemoryState) {
    this.#state = state;
  }

  async getMessage(id: string): Promise<MessageRecord | null> {
    const row = this.#state.messages.get(id);
    return row ? copy(row.record) : null;
  }

  /** Newest first by id (core's ids are time-sortable); `before` is exclusive. */
  async listMessages(query: MessageQuery): Promise<MessageRecord[]> {
    const matches: MessageRecord[] = [];
    for (const { record } of this.#state.messages.values()) {
      if (query.status !== undefined && record.status !== query.status) continue;
      if (query.type !== undefined && record.type !== query.type) continue;
      if (query.tenantId !== undefined && record.tenantId !== query.tenantId) continue;
      if (query.since !== undefined && record.createdAt < query.since) continue;
      if (query.until !== undefined && record.createdAt >= query.until) continue;
      if (query.before !== undefined && compare(record.id, query.before) >= 0) continue;
      matches.push(record);
    }
    return newestFirst(matches, query.limit);
  }

  async listDeliveries(messageId: string): Promise<DeliveryRecord[]> {
    return this.#deliveriesOf(messageId)
      .sort((a, b) => a.createdAt - b.createdAt || compare(a.id, b.id))
      .map(copy);
  }

  async listAttempts(messageId: string): Promise<AttemptRecord[]> {
    // Array#sort is stable, so equal keys keep insertion order.
    return [...(this.#state.attemptsByMessage.get(messageId) ?? [])]
      .sort((a, b) => a.startedAt - b.startedAt || a.attemptNumber - b.attemptNumber)
      .map(copy);
  }

  /** Newest first by delivery id (time-sortable); `before` is exclusive. */
  async listDeadLetters(query: PageRequest & { endpointId?: string | undefined }): Promise<DeliveryRecord[]> {
    const matches: DeliveryRecord[] = [];
    for (const delivery of this.#state.deliveries.values()) {
      if (delivery.status !== "dead-lettered") continue;
      if (query.endpointId !== undefined && delivery.endpointId !== query.endpointId) continue;
      if (query.before !== undefined && compare(delivery.id, query.before) >= 0) continue;
      matches.push(delivery);
    }
    return newestFirst(matches, query.limit);
  }

  async countDeliveries(endpointId?: string): Promise<Partial<Record<DeliveryStatus, number>>> {
    const counts: Partial<Record<DeliveryStatus, number>> = {};
    for (const delivery of this.#state.deliveries.values()) {
      if (endpointId !== undefined && delivery.endpointId !== endpointId) continue;
      counts[delivery.status] = (counts[delivery.status] ?? 0) + 1;
    }
    return counts;
  }

  #deliveriesOf(messageId: string): DeliveryRecord[] {
    return (this.#state.deliveryIdsByMessage.get(messageId) ?? []).map(
      (id) => this.#state.deliveries.get(id)!,
    );
  }
}

function newestFirst<T extends { id: string }>(rows: T[], limit: number): T[] {
  return rows
    .sort((a, b) => compare(b.id, a.id))
    .slice(0, Math.max(0, limit))
    .map(copy);
}
