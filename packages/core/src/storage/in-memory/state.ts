import type {
  AttemptRecord,
  DeliveryRecord,
  DeliveryStatus,
  EndpointRecord,
  HealthStats,
  MessageRecord,
} from "../records.js";
import type { AuditLogRecord, HealthBucket, HealthBucketQuery } from "../storage.js";
import { finalMessageStatus } from "../rules.js";

export { pendingDelivery } from "../records.js";

/** A message plus its fan-out lease, which is storage-internal (not part of `MessageRecord`). */
export interface MessageRow {
  record: MessageRecord;
  fanoutToken: string | null;
  fanoutLeaseUntil: number;
}

/** An endpoint plus its soft-delete flag. */
export interface EndpointRow {
  record: EndpointRecord;
  deleted: boolean;
}

/** A key held on an endpoint (`OrderingStore`). */
export interface HeldKeyRow {
  endpointId: string;
  orderingKey: string;
  deliveryId: string;
  heldAt: number;
}

/** The map key of an endpoint's ordering key. */
export function keyOf(endpointId: string, orderingKey: string): string {
  return `${endpointId}\u0000${orderingKey}`;
}

/** Code-unit order of ids (like `COLLATE "C"` in SQL); core's ids sort by creation time. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Waiting order: by message id, then delivery id. */
function byMessage(a: DeliveryRecord, b: DeliveryRecord): number {
  return compare(a.messageId, b.messageId) || compare(a.id, b.id);
}

/** Deep copy, so callers never hold references into the store. */
export function copy<T>(value: T): T {
  return structuredClone(value);
}

/**
 * The whole in-memory database. Every method runs synchronously, so on a single JS thread each
 * storage operation is atomic. Indexes (`unfanned`, `pending`, `heldByEndpoint`) hold only live work,
 * so claiming never walks history.
 */
export class MemoryState {
  readonly messages = new Map<string, MessageRow>();
  readonly messageIdByKey = new Map<string, string>();
  /** Pending messages not yet fanned out. */
  readonly unfanned = new Set<string>();
  /** Ordering key → its messages in `unfanned`. */
  readonly unfannedByKey = new Map<string, Set<string>>();
  /** `keyOf(endpoint, key)` → its head: the delivery of the key to the endpoint that is `pending` or `held`. */
  readonly keyHeads = new Map<string, string>();
  /** `keyOf(endpoint, key)` → its `waiting` deliveries, in message id order. */
  readonly keyWaiting = new Map<string, DeliveryRecord[]>();
  /** `keyOf(endpoint, key)` → the hold on it. */
  readonly heldKeys = new Map<string, HeldKeyRow>();
  readonly deliveries = new Map<string, DeliveryRecord>();
  readonly deliveryIdsByMessage = new Map<string, string[]>();
  /** Deliveries in status `pending` (leased or not). */
  readonly pending = new Set<string>();
  readonly heldByEndpoint = new Map<string, Set<string>>();
  readonly attemptsByMessage = new Map<string, AttemptRecord[]>();
  readonly endpoints = new Map<string, EndpointRow>();
  /** endpoint id → health bucket start → counters. */
  readonly health = new Map<string, Map<number, HealthStats>>();
  /** endpoint id → its rate-limit bucket (see `bucketTokens`). */
  readonly rateBuckets = new Map<string, { tokens: number; at: number }>();
  endpointsRevision = 0;
  /** The audit log (`Storage.auditLog`), by id, and the ids of its keyed entries by key. */
  readonly auditEntries = new Map<string, AuditLogRecord>();
  readonly auditIdByKey = new Map<string, string>();

  /** Insert a new delivery row and index it. */
  insertDelivery(delivery: DeliveryRecord): void {
    this.deliveries.set(delivery.id, delivery);
    const siblings = this.deliveryIdsByMessage.get(delivery.messageId);
    if (siblings) siblings.push(delivery.id);
    else this.deliveryIdsByMessage.set(delivery.messageId, [delivery.id]);
    this.#index(delivery);
  }

  /** Index a new message awaiting fan-out. */
  addUnfanned(message: { id: string; orderingKey?: string }): void {
    this.unfanned.add(message.id);
    if (message.orderingKey === undefined) return;
    const ids = this.unfannedByKey.get(message.orderingKey);
    if (ids) ids.add(message.id);
    else this.unfannedByKey.set(message.orderingKey, new Set([message.id]));
  }

  /** The message was fanned out (or delivered directly): it no longer awaits fan-out. */
  markFanned(message: { id: string; orderingKey?: string }): void {
    this.unfanned.delete(message.id);
    if (message.orderingKey === undefined) return;
    const ids = this.unfannedByKey.get(message.orderingKey);
    ids?.delete(message.id);
    if (ids?.size === 0) this.unfannedByKey.delete(message.orderingKey);
  }

  /**
   * `ORDERING_RULES.fanoutInOrder`: whether an earlier message of `message`'s key awaits fan-out, other
   * than the ones in `recording`.
   */
  earlierUnfanned(message: { id: string; orderingKey?: string }, recording: ReadonlySet<string>): boolean {
    if (message.orderingKey === undefined) return false;
    for (const id of this.unfannedByKey.get(message.orderingKey) ?? []) {
      if (compare(id, message.id) < 0 && !recording.has(id)) return true;
    }
    return false;
  }

  /**
   * `ORDERING_RULES.directHead`: whether `message`'s key is clear — no earlier message of it awaits
   * fan-out, and no endpoint has an open delivery of it (a fanned-out message still pending) or holds it.
   */
  keyClear(message: { id: string; orderingKey?: string }): boolean {
    const key = message.orderingKey;
    if (key === undefined || this.earlierUnfanned(message, new Set())) return false;
    const suffix = `\u0000${key}`;
    for (const map of [this.keyHeads, this.keyWaiting, this.heldKeys] as const) {
      for (const ref of map.keys()) if (ref.endsWith(suffix)) return false;
    }
    return true;
  }

  /**
   * `ORDERING_RULES.replayKeepsPlace`: when a clear message of the key is leased (it may be in flight
   * straight from its lease), the end of that lease; else undefined.
   */
  clearLeaseUntil(orderingKey: string, now: number): number | undefined {
    let until: number | undefined;
    for (const id of this.unfannedByKey.get(orderingKey) ?? []) {
      const row = this.messages.get(id)!;
      if (row.fanoutToken?.startsWith("d.") && row.fanoutLeaseUntil > now)
        until = Math.max(until ?? 0, row.fanoutLeaseUntil);
    }
    return until;
  }

  /** `ORDERING_RULES.directHead`: fan-outs of the key refused while its clear message was in flight may go now. */
  unrefuse(orderingKey: string, now: number): void {
    for (const id of this.unfannedByKey.get(orderingKey) ?? []) {
      const row = this.messages.get(id)!;
      if (row.fanoutToken === null && row.fanoutLeaseUntil > now) row.fanoutLeaseUntil = now;
    }
  }

  /**
   * `ORDERING_RULES.nextOnEnd`: when the endpoint's key has no head and no hold, its earliest waiting
   * delivery becomes `pending`, due `now`. Returns it, or undefined.
   */
  settleKey(endpointId: string, orderingKey: string, now: number): DeliveryRecord | undefined {
    const key = keyOf(endpointId, orderingKey);
    if (this.keyHeads.has(key) || this.heldKeys.has(key)) return undefined;
    const next = this.keyWaiting.get(key)?.[0];
    if (next === undefined) return undefined;
    this.setDeliveryStatus(next, "pending");
    next.nextAttemptAt = now;
    next.updatedAt = now;
    return next;
  }

  /** Change a delivery's status, keeping the work indexes in step. */
  setDeliveryStatus(delivery: DeliveryRecord, status: DeliveryStatus): void {
    this.#unindex(delivery);
    delivery.status = status;
    this.#index(delivery);
  }

  /**
   * Give every listed message whose deliveries are all terminal its final status (`dead-lettered` if
   * any delivery is, else `expired` if any is, else `dispatched`).
   */
  finaliseMessages(messageIds: Iterable<string>, now: number): void {
    for (const messageId of messageIds) {
      const row = this.messages.get(messageId);
      if (row?.record.status !== "pending" || row.record.fannedOutAt === null) continue;
      const statuses = (this.deliveryIdsByMessage.get(messageId) ?? []).map(
        (id) => this.deliveries.get(id)!.status,
      );
      const status = finalMessageStatus(statuses);
      if (status === null) continue;
      row.record.status = status;
      row.record.finishedAt = now;
    }
  }

  /** Attempts and failures in the endpoint's health buckets starting at or after `since`. */
  healthSince(endpointId: string, since: number): HealthStats {
    const stats: HealthStats = { attempts: 0, failures: 0 };
    for (const [start, bucket] of this.health.get(endpointId) ?? []) {
      if (start < since) continue;
      stats.attempts += bucket.attempts;
      stats.failures += bucket.failures;
    }
    return stats;
  }

  /** `Storage.healthBuckets`: one endpoint's buckets from `since`, or every endpoint's summed per start. */
  healthBuckets({ since, endpointId }: HealthBucketQuery): HealthBucket[] {
    const sums = new Map<number, HealthBucket>();
    for (const [id, buckets] of this.health) {
      if (endpointId !== undefined && id !== endpointId) continue;
      for (const [start, { attempts, failures }] of buckets) {
        if (start < since || attempts === 0) continue;
        const sum = sums.get(start) ?? { start, attempts: 0, failures: 0 };
        sum.attempts += attempts;
        sum.failures += failures;
        sums.set(start, sum);
      }
    }
    return [...sums.values()].sort((a, b) => a.start - b.start);
  }

  /** Live (not deleted) endpoint row, or undefined. */
  liveEndpoint(id: string): EndpointRow | undefined {
    const row = this.endpoints.get(id);
    return row && !row.deleted ? row : undefined;
  }

  #index(delivery: DeliveryRecord): void {
    if (delivery.status === "pending") this.pending.add(delivery.id);
    if (delivery.status === "held") {
      const held = this.heldByEndpoint.get(delivery.endpointId);
      if (held) held.add(delivery.id);
      else this.heldByEndpoint.set(delivery.endpointId, new Set([delivery.id]));
    }
    if (delivery.orderingKey === undefined) return;
    const key = keyOf(delivery.endpointId, delivery.orderingKey);
    if (delivery.status === "pending" || delivery.status === "held") this.keyHeads.set(key, delivery.id);
    else if (delivery.status === "waiting") {
      const waiting = this.keyWaiting.get(key) ?? [];
      this.keyWaiting.set(key, waiting);
      // Mostly appended: a key's messages fan out in id order.
      let at = waiting.length;
      while (at > 0 && byMessage(waiting[at - 1]!, delivery) > 0) at--;
      waiting.splice(at, 0, delivery);
    }
  }

  #unindex(delivery: DeliveryRecord): void {
    this.pending.delete(delivery.id);
    this.heldByEndpoint.get(delivery.endpointId)?.delete(delivery.id);
    if (delivery.orderingKey === undefined) return;
    const key = keyOf(delivery.endpointId, delivery.orderingKey);
    if (this.keyHeads.get(key) === delivery.id) this.keyHeads.delete(key);
    const waiting = this.keyWaiting.get(key);
    if (waiting === undefined) return;
    const at = waiting.indexOf(delivery);
    if (at >= 0) waiting.splice(at, 1);
    if (waiting.length === 0) this.keyWaiting.delete(key);
  }
}
