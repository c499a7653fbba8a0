import type { AttemptRecord, DeadLetter, DeliveryRecord, MessageRecord } from "../records.js";
import type { AttemptFeedQuery, DeadLetterQuery, MessageQuery, RecentAttemptsQuery } from "../storage.js";
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

  /** Newest first by id (core's ids are time-sortable), before the `after` id. */
  async listMessages(query: MessageQuery): Promise<MessageRecord[]> {
    const matches: MessageRecord[] = [];
    for (const { record } of this.#state.messages.values()) {
      if (query.status !== undefined && record.status !== query.status) continue;
      if (query.type !== undefined && record.type !== query.type) continue;
      if (query.tenantId !== undefined && record.tenantId !== query.tenantId) continue;
      if (query.since !== undefined && record.createdAt < query.since) continue;
      if (query.until !== undefined && record.createdAt >= query.until) continue;
      if (query.after !== undefined && compare(record.id, query.after) >= 0) continue;
      if (query.from !== undefined && compare(record.id, query.from) < 0) continue;
      matches.push(record);
    }
    return newestFirst(matches, query.limit);
  }

  async messageWindow(after: string | undefined, size: number): Promise<string | null> {
    const ids = [...this.#state.messages.keys()]
      .filter((id) => after === undefined || compare(id, after) < 0)
      .sort((a, b) => compare(b, a));
    return ids.length < size ? null : ids[size - 1]!;
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

  /** Newest first by delivery id (time-sortable), before the `after` id. */
  async listDeadLetters(query: DeadLetterQuery): Promise<DeadLetter[]> {
    const status = query.status ?? "dead-lettered";
    const matches: DeliveryRecord[] = [];
    for (const delivery of this.#state.deliveries.values()) {
      if (delivery.status !== status) continue;
      if (query.endpointId !== undefined && delivery.endpointId !== query.endpointId) continue;
      if (query.since !== undefined && delivery.updatedAt < query.since) continue;
      if (query.until !== undefined && delivery.updatedAt >= query.until) continue;
      if (query.after !== undefined && compare(delivery.id, query.after) >= 0) continue;
      matches.push(delivery);
    }
    return newestFirst(matches, query.limit).map((delivery) => {
      const message = this.#state.messages.get(delivery.messageId)!.record;
      return {
        status,
        deliveryId: delivery.id,
        messageId: delivery.messageId,
        endpointId: delivery.endpointId,
        webhookId: delivery.webhookId,
        type: message.type,
        tenantId: message.tenantId,
        attemptsMade: delivery.attemptsMade,
        lastError: delivery.lastError,
        createdAt: message.createdAt,
        deadLetteredAt: delivery.updatedAt,
      };
    });
  }

  /** Walks every attempt: InMemoryStorage holds no more history than a process can scan. */
  async recentAttempts(query: RecentAttemptsQuery): Promise<AttemptRecord[]> {
    const matches: AttemptRecord[] = [];
    for (const attempts of this.#state.attemptsByMessage.values()) {
      for (const attempt of attempts) if (attempt.startedAt >= query.since) matches.push(attempt);
    }
    return matches
      .sort((a, b) => a.startedAt - b.startedAt || compare(a.id, b.id))
      .slice(0, Math.max(0, query.limit))
      .map(copy);
  }

  /** Walks every attempt, like `recentAttempts`. */
  async attemptsAfter(query: AttemptFeedQuery): Promise<AttemptRecord[]> {
    const matches: AttemptRecord[] = [];
    for (const [messageId, attempts] of this.#state.attemptsByMessage) {
      if (query.type !== undefined && this.#state.messages.get(messageId)?.record.type !== query.type)
        continue;
      for (const attempt of attempts) {
        if (compare(attempt.id, query.after) <= 0) continue;
        if (query.endpointId !== undefined && attempt.endpointId !== query.endpointId) continue;
        if (query.outcome !== undefined && attempt.outcome !== query.outcome) continue;
        matches.push(attempt);
      }
    }
    return matches
      .sort((a, b) => compare(a.id, b.id))
      .slice(0, Math.max(0, query.limit))
      .map(copy);
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
