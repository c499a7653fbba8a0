import type {
  AttemptRecord,
  ClaimedDelivery,
  DeliveryRecord,
  DeliveryStatus,
  EndpointRecord,
  NewDelivery,
  NewMessage,
} from "../../storage/records.js";
import type {
  DeliveryTransition,
  DueClaim,
  FanoutClaim,
  LeaseRequest,
  RecordOutcomesResult,
  Storage,
} from "../../storage/storage.js";

/** Base time of every test: 2026-01-01T00:00:00Z (a multiple of the health bucket size). */
export const T0 = Date.UTC(2026, 0, 1);
/** Default lease length in the suite. */
export const LEASE_MS = 60_000;

let sequence = 0;

/** A unique id that sorts after every id generated before it, like core's time-sortable ids. */
export function nextId(prefix: string): string {
  sequence += 1;
  return `${prefix}_${String(sequence).padStart(9, "0")}`;
}

/** A message as `send()` would write it (for storage tests; exported by `@postel/core/testing`). */
export function newMessage(overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    id: nextId("msg"),
    type: "order.created",
    payload: JSON.stringify({ order: 1 }),
    tenantId: null,
    idempotencyKey: null,
    createdAt: T0,
    expiresAt: null,
    ...overrides,
  };
}

/** An active endpoint with one secret and every optional field empty (exported by `@postel/core/testing`). */
export function newEndpoint(overrides: Partial<EndpointRecord> = {}): EndpointRecord {
  return {
    id: nextId("ep"),
    url: "https://receiver.example.com/hook",
    description: null,
    types: ["*"],
    filter: null,
    filterFn: null,
    transform: null,
    headers: {},
    retryPolicy: null,
    circuitBreaker: null,
    autoDisable: null,
    maxInFlight: null,
    rateLimit: null,
    tenantId: null,
    metadata: {},
    onKeyFailure: "skip",
    state: "active",
    circuitOpenUntil: null,
    disabledReason: null,
    createdAt: T0,
    updatedAt: T0,
    secrets: [{ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", createdAt: T0, expiresAt: null }],
    ...overrides,
  };
}

/** A lease request at `now` for `LEASE_MS`. */
export function lease(now: number, overrides: Partial<DueClaim & FanoutClaim> = {}): DueClaim & FanoutClaim {
  return { owner: "worker-1", now, until: now + LEASE_MS, limit: 1000, ...overrides };
}

/** The HTTP attempt a worker would record for a claimed delivery. */
export function attemptFor(claimed: ClaimedDelivery, overrides: Partial<AttemptRecord> = {}): AttemptRecord {
  const { delivery } = claimed;
  return {
    id: nextId("att"),
    deliveryId: delivery.id,
    messageId: delivery.messageId,
    endpointId: delivery.endpointId,
    webhookId: delivery.webhookId,
    attemptNumber: delivery.attemptsMade + 1,
    startedAt: T0,
    latencyMs: 42,
    outcome: "success",
    statusCode: 200,
    errorCode: null,
    error: null,
    responseSnippet: "ok",
    ...overrides,
  };
}

/** Create `count` endpoints, created one millisecond apart. */
export async function createEndpoints(
  storage: Storage<unknown>,
  count: number,
  overrides: Partial<EndpointRecord> = {},
): Promise<EndpointRecord[]> {
  const endpoints: EndpointRecord[] = [];
  for (let i = 0; i < count; i++) {
    const endpoint = newEndpoint({ createdAt: T0 + i, updatedAt: T0 + i, ...overrides });
    await storage.createEndpoint(endpoint);
    endpoints.push(endpoint);
  }
  return endpoints;
}

/**
 * Enqueue messages and fan each out to every given endpoint at `now` (one delivery per message ×
 * endpoint, all due at `now`). Fails loudly if other un-fanned messages exist: the fixture must not
 * fan out messages a test enqueued for another purpose.
 */
export async function fanOut(
  storage: Storage<unknown>,
  options: { endpoints: EndpointRecord[]; messages?: number | Partial<NewMessage>[]; now?: number },
): Promise<{ messages: NewMessage[]; deliveries: NewDelivery[] }> {
  const now = options.now ?? T0;
  const specs = options.messages ?? 1;
  const messages = (typeof specs === "number" ? Array.from({ length: specs }, () => ({})) : specs).map(
    (spec) => newMessage({ createdAt: now, ...spec }),
  );
  for (const message of messages) await storage.enqueue(message);
  const claimed = await storage.claimFanout(lease(now, { limit: messages.length + 1 }));
  const tokens = new Map(claimed.map((claim) => [claim.message.id, claim.token]));
  if (claimed.length !== messages.length || messages.some((message) => !tokens.has(message.id))) {
    throw new Error("fanOut fixture: claimFanout returned other messages than the ones just enqueued");
  }
  const deliveries: NewDelivery[] = [];
  const results = messages.map((message) => {
    const key = message.orderingKey;
    const forMessage = options.endpoints.map((endpoint) => ({
      id: nextId("dlv"),
      messageId: message.id,
      endpointId: endpoint.id,
      webhookId: nextId("wh"),
      createdAt: now,
      ...(key === undefined ? {} : { orderingKey: key }),
    }));
    deliveries.push(...forMessage);
    const result = { messageId: message.id, token: tokens.get(message.id)!, deliveries: forMessage };
    return key === undefined ? result : { ...result, orderingKey: key };
  });
  await storage.recordFanout(results, now);
  return { messages, deliveries };
}

/** Claim every due delivery at `now`, indexed by delivery id. */
export async function claimAll(
  storage: Storage<unknown>,
  now: number,
  overrides: Partial<LeaseRequest> = {},
): Promise<Map<string, ClaimedDelivery>> {
  const claimed = await storage.claimDue(lease(now, overrides));
  return new Map(claimed.map((claim) => [claim.delivery.id, claim]));
}

/** Claim every due delivery at `now` and return the one with `deliveryId` (throws when absent). */
export async function claimOne(
  storage: Storage<unknown>,
  deliveryId: string,
  now: number,
): Promise<ClaimedDelivery> {
  const claimed = (await claimAll(storage, now)).get(deliveryId);
  if (!claimed) throw new Error(`fixture: delivery ${deliveryId} was not claimable at ${now}`);
  return claimed;
}

/**
 * Record one outcome for a claimed delivery at `now`. Transitions that imply an HTTP call
 * (succeeded, retry, failed, dead-lettered) carry an attempt unless `attempt` is false.
 */
export async function settle(
  storage: Storage<unknown>,
  claimed: ClaimedDelivery,
  transition: DeliveryTransition,
  now: number,
  attempt?: Partial<AttemptRecord> | false,
): Promise<RecordOutcomesResult> {
  const httpCall = madeHttpCall(transition);
  const defaults: Partial<AttemptRecord> =
    transition.kind === "succeeded"
      ? { startedAt: now }
      : transition.kind === "failed"
        ? { startedAt: now, outcome: "permanent", statusCode: 400, error: "HTTP 400" }
        : { startedAt: now, outcome: "retryable", statusCode: 500, error: "HTTP 500" };
  return storage.recordOutcomes(
    [
      {
        deliveryId: claimed.delivery.id,
        leaseToken: claimed.leaseToken,
        transition,
        ...(httpCall && attempt !== false
          ? { attempt: attemptFor(claimed, { ...defaults, ...attempt }) }
          : {}),
      },
    ],
    now,
  );
}

/** The stored row of a delivery (throws when absent). */
export async function deliveryRow(
  storage: Storage<unknown>,
  delivery: { id: string; messageId: string },
): Promise<DeliveryRecord> {
  const row = (await storage.listDeliveries(delivery.messageId)).find((d) => d.id === delivery.id);
  if (!row) throw new Error(`fixture: delivery ${delivery.id} not found`);
  return row;
}

/** True for the transitions that follow an HTTP call (and so carry an attempt). */
export function madeHttpCall(transition: DeliveryTransition): boolean {
  return ["succeeded", "retry", "failed", "dead-lettered"].includes(transition.kind);
}

/** Sorted ids, for order-insensitive comparisons. */
export function ids(rows: Iterable<{ id: string }>): string[] {
  return [...rows].map((row) => row.id).sort();
}

/**
 * How many deliveries are in each status, counted through the verbs of the contract (every message's
 * deliveries, listed through the operations capability): for tests of small stores only.
 */
export async function countDeliveries(
  storage: Storage<unknown>,
): Promise<Partial<Record<DeliveryStatus, number>>> {
  const counts: Partial<Record<DeliveryStatus, number>> = {};
  const operations = storage.operations;
  if (operations === undefined) throw new Error("countDeliveries needs the storage's operations capability");
  let after: string | undefined;
  for (;;) {
    const page = await operations.listMessages({ limit: 500, after });
    for (const message of page)
      for (const delivery of await storage.listDeliveries(message.id))
        counts[delivery.status] = (counts[delivery.status] ?? 0) + 1;
    if (page.length < 500) return counts;
    after = page[page.length - 1]!.id;
  }
}
