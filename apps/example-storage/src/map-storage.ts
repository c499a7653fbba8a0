import { randomUUID } from "node:crypto";
import {
  type ClaimedDelivery,
  type DeliveryRecord,
  type DeliveryStorage,
  fanoutMessageStatus,
  type HealthStats,
  InvalidInputError,
  isTerminal,
  type MessageRecord,
} from "@postel/core/storage";
import { copy, MapTables, type MessageRow } from "./map-tables.js";

/** Oldest first; core's ids sort by creation time, so they break ties. */
const byAge = (a: MessageRow, b: MessageRow) =>
  a.record.createdAt - b.record.createdAt || (a.record.id < b.record.id ? -1 : 1);

/**
 * Postel's required storage part (`DeliveryStorage`) on plain `Map`s in process memory, with no
 * optional capability: the example of "Writing your own storage". Every verb runs without an `await`
 * between its reads and its writes, so on the one JS thread each is atomic: that is the whole of its
 * concurrency control (a database gets it from row locks and `SKIP LOCKED`). It joins no caller
 * transaction (`Tx = never`), scans instead of indexing, and forgets everything when the process exits.
 * @example
 * const postel = Postel({ outbound: { storage: MapStorage() } });
 */
export function MapStorage(): DeliveryStorage {
  const tables = new MapTables();
  const { messages, messageIdByKey, deliveries, endpoints, health } = tables;

  return {
    name: "map",

    // The outbox: written by send(), read once by fan-out.

    async enqueue(message, options) {
      if (options?.tx !== undefined) {
        throw new InvalidInputError("INVALID_ARGUMENT", "MapStorage has no transactions: send without `tx`.");
      }
      const key = message.idempotencyKey;
      const existing = key === null ? undefined : messageIdByKey.get(key);
      if (existing !== undefined) return { id: existing, reused: true };
      if (messages.has(message.id)) {
        throw new InvalidInputError("INVALID_ARGUMENT", `A message with id ${message.id} is already stored.`);
      }
      const record: MessageRecord = {
        ...copy(message),
        status: "pending",
        fannedOutAt: null,
        finishedAt: null,
      };
      messages.set(message.id, { record, fanoutLease: null, deliveries: [] });
      if (key !== null) messageIdByKey.set(key, message.id);
      return { id: message.id, reused: false };
    },

    async claimFanout({ now, until, limit, newest }) {
      const claimable = [...messages.values()]
        .filter((m) => m.record.fannedOutAt === null)
        .filter((m) => m.fanoutLease === null || m.fanoutLease.until <= now) // unleased, or the lease ended
        .sort(byAge);
      // Up to `newest.limit` of the newest since `newest.since` (so a fresh send skips the backlog),
      // then the oldest, up to `limit` in all; with `newest.only`, none of the oldest.
      const picked = new Set(
        newest
          ? claimable
              .filter((m) => m.record.createdAt >= newest.since)
              .reverse()
              .slice(0, Math.min(newest.limit, limit))
          : [],
      );
      if (!newest?.only) for (const message of claimable) if (picked.size < limit) picked.add(message);
      return [...picked].sort(byAge).map((message) => {
        message.fanoutLease = { token: randomUUID(), until };
        return { message: copy(message.record), token: message.fanoutLease.token };
      });
    },

    async recordFanout(results, now, workerLease) {
      const claimed: ClaimedDelivery[] = [];
      for (const result of results) {
        const message = messages.get(result.messageId);
        // Fenced by the token: a worker whose lease was taken over writes nothing for this message.
        if (message?.record.fannedOutAt !== null || message.fanoutLease?.token !== result.token) continue;
        message.fanoutLease = null;
        message.record.fannedOutAt = now;
        // Core's rule: expired when its ttl elapsed, finished at once when no endpoint matched.
        const status = fanoutMessageStatus(result);
        if (status !== null) {
          message.record.status = status;
          message.record.finishedAt = now;
          continue;
        }
        for (const { id, messageId, endpointId, webhookId, createdAt, queued } of result.deliveries) {
          const delivery: DeliveryRecord = {
            id,
            messageId,
            endpointId,
            webhookId,
            createdAt,
            status: "pending",
            retriesUsed: 0,
            attemptsMade: 0,
            nextAttemptAt: now,
            leaseToken: null,
            leaseOwner: null,
            lastError: null,
            updatedAt: now,
          };
          deliveries.set(id, delivery);
          message.deliveries.push(delivery);
          if (workerLease && !queued) {
            claimed.push(tables.lease(delivery, workerLease.owner, workerLease.until, now));
          }
        }
      }
      return claimed;
    },

    // The delivery queue: claim due work, record outcomes.

    async claimDue({ owner, now, until, limit, skipEndpoints = [] }) {
      // A leased delivery is `pending` with `nextAttemptAt` = its lease's end, so it is due again
      // exactly when that lease expires.
      return [...deliveries.values()]
        .filter((d) => d.status === "pending" && d.nextAttemptAt <= now)
        .filter((d) => !skipEndpoints.includes(d.endpointId))
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map((delivery) => tables.lease(delivery, owner, until, now));
    },

    async renewLeases(leases, until) {
      const lost: string[] = [];
      for (const { deliveryId, leaseToken } of leases) {
        const delivery = tables.leased(deliveryId, leaseToken);
        if (delivery) delivery.nextAttemptAt = until;
        else lost.push(deliveryId);
      }
      return lost;
    },

    async recordOutcomes(outcomes, now) {
      const recorded: string[] = [];
      const leaseLost: string[] = [];
      const touched = new Set<string>();
      // Outcomes with `newDelivery` come only from the direct capability, which this storage lacks.
      for (const { deliveryId, leaseToken, transition, attempt, lastError } of outcomes) {
        const delivery = tables.leased(deliveryId, leaseToken);
        if (!delivery) {
          leaseLost.push(deliveryId);
          continue;
        }
        tables.apply(delivery, transition, now);
        if (lastError !== undefined) delivery.lastError = lastError;
        if (attempt) {
          // The attempt itself is not kept: only the operations capability (listAttempts) reads it.
          delivery.attemptsMade += 1;
          tables.countAttempt(delivery.endpointId, attempt.startedAt, attempt.outcome === "success");
        }
        touched.add(delivery.messageId);
        recorded.push(deliveryId);
      }
      tables.finalise(touched, now);
      return { recorded, leaseLost };
    },

    async releaseHeld(endpointId, now) {
      let released = 0;
      for (const delivery of deliveries.values()) {
        if (delivery.endpointId !== endpointId || delivery.status !== "held") continue;
        delivery.status = "pending";
        delivery.nextAttemptAt = now;
        delivery.updatedAt = now;
        released += 1;
      }
      return released;
    },

    // Endpoints. Every change bumps the revision, by which fan-out caches them (secrets included).

    async createEndpoint(endpoint) {
      endpoints.set(endpoint.id, copy(endpoint));
      tables.endpointsRevision += 1;
    },

    async getEndpoint(id) {
      const endpoint = endpoints.get(id);
      return endpoint ? copy(endpoint) : null;
    },

    async allEndpoints() {
      return [...endpoints.values()].map(copy);
    },

    async endpointsRevision() {
      return tables.endpointsRevision;
    },

    async updateEndpoint(id, fields, now) {
      const endpoint = endpoints.get(id);
      if (!endpoint) return null;
      Object.assign(endpoint, copy(fields), { updatedAt: now });
      tables.endpointsRevision += 1;
      return copy(endpoint);
    },

    async deleteEndpoint(id, now) {
      if (!endpoints.delete(id)) return false;
      tables.endpointsRevision += 1;
      const touched = new Set<string>();
      for (const delivery of deliveries.values()) {
        if (delivery.endpointId !== id || isTerminal(delivery.status)) continue;
        tables.apply(delivery, { kind: "cancelled" }, now); // its lease ends: the holder's outcome is refused
        touched.add(delivery.messageId);
      }
      tables.finalise(touched, now);
      return true;
    },

    async transitionEndpoint(id, expected, next, now) {
      // Compare-and-set: of several instances deciding the same transition, exactly one wins.
      const endpoint = endpoints.get(id);
      if (endpoint?.state !== expected.state || endpoint.circuitOpenUntil !== expected.circuitOpenUntil) {
        return false;
      }
      Object.assign(endpoint, next, { updatedAt: now });
      tables.endpointsRevision += 1;
      return true;
    },

    async addEndpointSecret(id, secret, previousExpireAt) {
      const endpoint = endpoints.get(id);
      if (!endpoint) return;
      for (const older of endpoint.secrets) older.expiresAt ??= previousExpireAt;
      endpoint.secrets.unshift(copy(secret));
      tables.endpointsRevision += 1;
    },

    async endpointHealth(id, since) {
      const total: HealthStats = { attempts: 0, failures: 0 };
      for (const [start, bucket] of health.get(id) ?? []) {
        if (start < since) continue;
        total.attempts += bucket.attempts;
        total.failures += bucket.failures;
      }
      return total;
    },

    // One message's fate.

    async getMessage(id) {
      const message = messages.get(id);
      return message ? copy(message.record) : null;
    },

    async listDeliveries(messageId) {
      return (messages.get(messageId)?.deliveries ?? []).map(copy);
    },

    async close() {},
  };
}
