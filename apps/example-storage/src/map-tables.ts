import { randomUUID } from "node:crypto";
import {
  type ClaimedDelivery,
  type DeliveryRecord,
  type DeliveryTransition,
  deliveryStatusOf,
  type EndpointRecord,
  finalMessageStatus,
  HEALTH_BUCKET_MS,
  type HealthStats,
  type MessageRecord,
} from "@postel/core/storage";

/** A message, the fan-out lease on it (storage-internal: not part of `MessageRecord`) and its deliveries. */
export interface MessageRow {
  record: MessageRecord;
  fanoutLease: { token: string; until: number } | null;
  /** The same objects as in `deliveries`, in creation order (one fan-out creates them all). */
  deliveries: DeliveryRecord[];
}

/** Callers get copies, so mutating a result never changes what is stored. */
export const copy = <T>(value: T): T => structuredClone(value);

/**
 * MapStorage's tables, and the writes several of its verbs share. Nothing here awaits, so each verb
 * that uses them stays atomic on the one JS thread.
 */
export class MapTables {
  readonly messages = new Map<string, MessageRow>();
  readonly messageIdByKey = new Map<string, string>();
  readonly deliveries = new Map<string, DeliveryRecord>();
  /** Live endpoints only: a deleted endpoint is gone from every read, so it is simply removed. */
  readonly endpoints = new Map<string, EndpointRecord>();
  /** Endpoint id → health bucket start → attempts and failures. */
  readonly health = new Map<string, Map<number, HealthStats>>();
  endpointsRevision = 0;

  /** The delivery when `token` is its current lease, else undefined: the lease was lost. */
  leased(deliveryId: string, token: string): DeliveryRecord | undefined {
    const delivery = this.deliveries.get(deliveryId);
    return delivery?.leaseToken === token ? delivery : undefined;
  }

  /** Lease a delivery to `owner` until `until` under a fresh token; returns it with its message. */
  lease(delivery: DeliveryRecord, owner: string, until: number, now: number): ClaimedDelivery {
    delivery.leaseToken = randomUUID();
    delivery.leaseOwner = owner;
    delivery.nextAttemptAt = until;
    delivery.updatedAt = now;
    const message = this.messages.get(delivery.messageId)!.record;
    return { delivery: copy(delivery), message: copy(message), leaseToken: delivery.leaseToken };
  }

  /** Apply what a worker (or `deleteEndpoint`) decided; the lease ends either way. */
  apply(delivery: DeliveryRecord, transition: DeliveryTransition, now: number): void {
    delivery.leaseToken = null;
    delivery.leaseOwner = null;
    delivery.updatedAt = now;
    if (transition.kind === "retry") {
      delivery.nextAttemptAt = transition.nextAttemptAt;
      delivery.retriesUsed = transition.retriesUsed;
    } else if (transition.kind === "deferred") {
      delivery.nextAttemptAt = transition.nextAttemptAt;
    }
    delivery.status = deliveryStatusOf(transition); // core's rule: retry and deferred stay pending
  }

  /** Add one HTTP attempt to its endpoint's health bucket; every non-success is a failure. */
  countAttempt(endpointId: string, startedAt: number, success: boolean): void {
    const buckets = this.health.get(endpointId) ?? new Map<number, HealthStats>();
    this.health.set(endpointId, buckets);
    const start = Math.floor(startedAt / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
    const bucket = buckets.get(start) ?? { attempts: 0, failures: 0 };
    bucket.attempts += 1;
    if (!success) bucket.failures += 1;
    buckets.set(start, bucket);
  }

  /** Each fanned-out message whose deliveries are now all terminal gets its final status. */
  finalise(messageIds: Iterable<string>, now: number): void {
    for (const messageId of messageIds) {
      const message = this.messages.get(messageId);
      if (message?.record.status !== "pending" || message.record.fannedOutAt === null) continue;
      // Core's rule (dead-lettered, then expired, else dispatched); null while one is still open.
      const status = finalMessageStatus(message.deliveries.map((delivery) => delivery.status));
      if (status === null) continue;
      message.record.status = status;
      message.record.finishedAt = now;
    }
  }
}
