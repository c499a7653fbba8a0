import type {
  AttemptRecord,
  ClaimedDelivery,
  ClaimedMessage,
  DeliveryRecord,
  EndpointFields,
  EndpointRecord,
  EndpointSecret,
  EndpointState,
  HealthStats,
  MessageRecord,
  NewDelivery,
  NewMessage,
} from "./records.js";

/**
 * Health counters are kept in fixed buckets of this many milliseconds (bucket start =
 * `floor(startedAt / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS`), so rolling-window queries stay cheap.
 */
export const HEALTH_BUCKET_MS = 10_000;

/** Who holds a lease and until when. */
export interface LeaseRequest {
  /** Identifies the worker (diagnostics only; fencing uses the per-claim token). */
  owner: string;
  now: number;
  /** Lease expiry; a leased delivery's `nextAttemptAt` becomes this. */
  until: number;
  limit: number;
}

/** A claim of new messages to fan out (`claimFanout`). */
export interface FanoutClaim extends LeaseRequest {
  /**
   * Also lease up to `limit` of the newest claimable messages created at or after `since` (the rest of
   * the claim stays oldest first, and the whole claim holds at most the claim's own `limit`), so a
   * message sent now is not queued behind a backlog of older ones. Workers ask for this while a
   * backlog drains. With `only`, the claim takes these alone, none from the oldest end: a worker looking
   * for messages just sent while its main claim works through a backlog.
   */
  newest?: { since: number; limit: number; only?: boolean };
}

/** A claim of due deliveries (`claimDue`). */
export interface DueClaim extends LeaseRequest {
  /**
   * Endpoints whose deliveries this claim must leave alone: they are at their cap on this worker, so
   * their work stays due for a worker with room for it. Empty or absent: no endpoint is skipped.
   */
  skipEndpoints?: readonly string[];
}

/** What a worker decided for one leased delivery. */
export type DeliveryTransition =
  /** 2xx: terminal `succeeded`. */
  | { kind: "succeeded" }
  /** Retryable failure with retries left: back to `pending`, due at `nextAttemptAt`. */
  | { kind: "retry"; nextAttemptAt: number; retriesUsed: number }
  /** Permanent failure (non-retryable 4xx, forbidden address): terminal `failed`. */
  | { kind: "failed" }
  /** Retryable failure with no retries left: terminal `dead-lettered`. */
  | { kind: "dead-lettered" }
  /** The message's ttl elapsed before delivery: terminal `expired`, no HTTP call made. */
  | { kind: "expired" }
  /** Circuit open: no HTTP call, no retry consumed; `pending` again at `nextAttemptAt`. */
  | { kind: "deferred"; nextAttemptAt: number }
  /** Endpoint disabled: parked as `held` until `releaseHeld`. */
  | { kind: "held" }
  /** Endpoint deleted: terminal `cancelled`. */
  | { kind: "cancelled" };

/** One delivery outcome to record, fenced by the lease token it was claimed with. */
export interface DeliveryOutcome {
  deliveryId: string;
  leaseToken: string;
  transition: DeliveryTransition;
  /** The HTTP attempt, when one was made (absent for deferred/held/expired/cancelled). */
  attempt?: AttemptRecord;
  lastError?: string | null;
  /**
   * Set when the delivery was made straight from its leased message (`ClaimedDelivery.direct`), so its
   * row does not exist yet. `leaseToken` is then the message's fan-out token, and recording means,
   * atomically and only while that token still holds the un-fanned message: mark the message fanned
   * out (its lease cleared), insert this delivery with the transition applied, and, this being the
   * message's only delivery, give the message its final status at once when the transition is terminal.
   */
  newDelivery?: NewDelivery;
  /**
   * The delivery's ordering key, as its row has it (absent on unordered deliveries): a storage may
   * serialise work per key before it writes (see `OrderingStore`).
   */
  orderingKey?: string;
  /**
   * Set on a keyed delivery that dead-letters or fails for good on an endpoint whose `onKeyFailure`
   * is `hold`: instead of letting the key's next delivery go, the storage holds the key on it.
   */
  holdKey?: true;
  /**
   * Set on a keyed delivery whose endpoint has room on this worker and no limits: the delivery its
   * end lets go (`ORDERING_RULES.nextOnEnd`) may be leased to the recorder (`ORDERING_RULES.leaseNext`).
   */
  leaseNext?: true;
}

/** The lease `recordOutcomes` may give the deliveries its outcomes let go (`ORDERING_RULES.leaseNext`). */
export interface NextLease {
  owner: string;
  until: number;
}

/** Result of `recordOutcomes`: ids whose lease was still held (written) and those refused. */
export interface RecordOutcomesResult {
  recorded: string[];
  /** Outcomes refused because the lease token no longer matched (lease lost); nothing was written. */
  leaseLost: string[];
  /**
   * Given a `NextLease`, the deliveries the ending outcomes with `leaseNext` let go, leased with it.
   * Present (empty when they let none go) when the storage leases them: then every one of them is
   * here. Absent when it leases none: they are due now, for any worker (core then looks for due work).
   */
  next?: ClaimedDelivery[];
}

/** One delivery fan-out creates. */
export interface FanoutDelivery extends NewDelivery {
  /**
   * Written due `now` and never leased, even when `recordFanout` leases the others: its endpoint has
   * no room on this worker, so it waits in storage for whichever worker has.
   */
  queued?: boolean;
}

/** Fan-out result for one claimed message. */
export interface FanoutResult {
  messageId: string;
  token: string;
  /** Deliveries to create; empty = no endpoint matched (the message becomes `dispatched`). */
  deliveries: FanoutDelivery[];
  /** True when the ttl elapsed before fan-out: the message becomes `expired`, no deliveries. */
  expired?: boolean;
  /** The message's ordering key (absent on unordered messages); its deliveries carry it too. */
  orderingKey?: string;
}

/** Options of `enqueue` and `enqueueMany`. `Tx` is the storage's transaction handle type. */
export interface EnqueueOptions<Tx> {
  /** Join the caller's transaction: the message commits or rolls back with it. */
  tx?: Tx | undefined;
}

/** The outbox: written by `send()`, read once by fan-out. */
export interface OutboxStore<Tx> {
  /**
   * Insert one message (one INSERT, joining `tx` when given). When `idempotencyKey` is already used,
   * insert nothing and return the existing message's id with `reused: true`. Wakes listening workers
   * when the storage supports it (e.g. NOTIFY, delivered on commit). An id already stored (a bug:
   * core's ids are unique) fails with `InvalidInputError`.
   */
  enqueue(message: NewMessage, options?: EnqueueOptions<Tx>): Promise<{ id: string; reused: boolean }>;
  /**
   * Lease up to `limit` pending messages that have not been fanned out, oldest first. A message is
   * claimable when not fanned out and not currently leased (or its lease expired). Each claim gets a
   * fresh token. With `newest`, part of the claim comes from the newest end (see `FanoutClaim`);
   * the result is oldest first either way, each message once.
   */
  claimFanout(lease: FanoutClaim): Promise<ClaimedMessage[]>;
  /**
   * Record fan-out atomically per message, fenced by its token (a lost lease writes nothing for that
   * message): insert its deliveries (`pending`, due `now`), mark it fanned out and give it the status
   * `fanoutMessageStatus(result)` says (expired, or final with no delivery; `finishedAt = now`).
   * When `lease` is given, the new deliveries (except
   * `queued` ones) are returned already leased to the caller (saving a claim round trip).
   */
  recordFanout(
    results: FanoutResult[],
    now: number,
    lease?: { owner: string; until: number },
  ): Promise<ClaimedDelivery[]>;
}

/** The delivery queue: claim due work, record outcomes. */
export interface DeliveryQueue {
  /**
   * Lease up to `limit` deliveries with status `pending` and `nextAttemptAt <= now`, earliest first,
   * skipping rows other workers hold (`FOR UPDATE SKIP LOCKED` / a single writer). Sets a fresh lease
   * token, `leaseOwner` and `nextAttemptAt = until`. Concurrent callers never get the same delivery.
   * Deliveries of `skipEndpoints` are left as they are.
   */
  claimDue(lease: DueClaim): Promise<ClaimedDelivery[]>;
  /**
   * Extend leases still held (token matches) to `until`; returns the ids whose lease was lost. A
   * lease is fenced by its token alone: one whose time ran out but that no worker claimed again
   * still holds (never also compare `until` with the clock).
   */
  renewLeases(leases: { deliveryId: string; leaseToken: string }[], until: number): Promise<string[]>;
  /**
   * Record a batch of outcomes in one round trip. Per outcome, only if the lease token still matches:
   * apply the transition (the status `deliveryStatusOf(transition)`, `updatedAt = now`, the lease
   * cleared), keep the attempt (the `operations` capability lists it; a storage without that
   * capability need only count it), add it to the endpoint's health bucket (`failures` counts every
   * non-success attempt) and bump `attemptsMade`. Then every message whose deliveries are now all
   * terminal gets `finalMessageStatus(...)` and `finishedAt = now`. Outcomes apply in order. An
   * outcome with `newDelivery` arrives only at a storage with the `direct` capability (see
   * `DirectDeliveryStore`): it inserts its delivery instead, fenced by its message's fan-out lease,
   * and a second direct outcome for a message the first already fanned out is lease lost. With the
   * `ordering` capability and `next`, it may lease what keyed outcomes let go (`ORDERING_RULES.leaseNext`).
   */
  recordOutcomes(outcomes: DeliveryOutcome[], now: number, next?: NextLease): Promise<RecordOutcomesResult>;
  /** Move an endpoint's `held` deliveries back to `pending`, due `now`. Returns how many. */
  releaseHeld(endpointId: string, now: number): Promise<number>;
}

/** Endpoints, their secrets and their shared state-machine fields. */
export interface EndpointStore {
  createEndpoint(endpoint: EndpointRecord): Promise<void>;
  /** A live endpoint (deleted ones are never returned). */
  getEndpoint(id: string): Promise<EndpointRecord | null>;
  /** Every live endpoint, for fan-out matching (core caches it by `endpointsRevision`). */
  allEndpoints(): Promise<EndpointRecord[]>;
  /**
   * A number that changes whenever any endpoint is created, updated (a new secret included), deleted or
   * changes state.
   */
  endpointsRevision(): Promise<number>;
  /** Overwrite the given user fields (others untouched), `updatedAt = now`; null when missing. */
  updateEndpoint(id: string, fields: Partial<EndpointFields>, now: number): Promise<EndpointRecord | null>;
  /**
   * The endpoint disappears from every read of this part; its `pending` and `held` deliveries become
   * `cancelled` (their leases end, and their messages are finalised as in `recordOutcomes`). A
   * storage with the `operations` capability keeps its row and health buckets (its dead letters and
   * the totals of `stats` still count it): a soft delete. Returns false when missing.
   */
  deleteEndpoint(id: string, now: number): Promise<boolean>;
  /**
   * Compare-and-set the state-machine fields: applies only when the current `state` and
   * `circuitOpenUntil` equal `expected`, so exactly one instance wins a transition or a probe slot.
   * A successful transition sets `updatedAt = now` and bumps `endpointsRevision`.
   */
  transitionEndpoint(
    id: string,
    expected: { state: EndpointState; circuitOpenUntil: number | null },
    next: { state: EndpointState; circuitOpenUntil: number | null; disabledReason: string | null },
    now: number,
  ): Promise<boolean>;
  /**
   * Add a secret (newest signs first), set `expiresAt` on the older ones that have none, and bump
   * `endpointsRevision` (the workers sign with the cached endpoint).
   */
  addEndpointSecret(id: string, secret: EndpointSecret, previousExpireAt: number): Promise<void>;
  /** Attempts and failures recorded for the endpoint in health buckets starting at or after `since`. */
  endpointHealth(id: string, since: number): Promise<HealthStats>;
}

/** What a sender reads about one message: the message and its deliveries. */
export interface MessageLookup {
  /** One message by id, or null. */
  getMessage(id: string): Promise<MessageRecord | null>;
  /** Every delivery of a message, oldest first. */
  listDeliveries(messageId: string): Promise<DeliveryRecord[]>;
}

/** Lifecycle hooks. */
export interface StorageLifecycle {
  /** Create or upgrade the schema. Safe to call concurrently from several processes. */
  migrate?(): Promise<void>;
  /**
   * Calls `onWake` when another process enqueues work (e.g. Postgres LISTEN). Resolves, with an
   * unsubscribe, once wake-ups flow (the LISTEN took effect on a writable primary), and rejects when
   * they cannot. `onLost` is called once if they stop later (the listening connection closed): the
   * workers poll at a short interval meanwhile and subscribe again.
   */
  subscribe?(onWake: () => void, onLost?: (error: unknown) => void): Promise<() => Promise<void>>;
  /**
   * Drops every connection the storage opened itself and opens new ones on next use; calls still in
   * flight on the old ones fail. The workers call it when a storage call missed its deadline (a
   * connection that will never answer). A storage on the app's own pool leaves that pool alone.
   */
  reset?(): Promise<void>;
  /** Release connections Postel opened itself (never the user's own pool). */
  close(): Promise<void>;
}

/**
 * The part of a storage every Postel needs: what `send()` writes, what the workers claim, lease and
 * record, the endpoints they deliver to, and one message's fate. The optional capabilities
 * (`Storage`'s other members) add the operations reads, replay, retention, limits and more.
 */
export interface DeliveryStorage<Tx = never>
  extends OutboxStore<Tx>,
    DeliveryQueue,
    EndpointStore,
    MessageLookup,
    StorageLifecycle {
  /** A short name for logs and errors (`"postgres"`, `"sqlite"`, `"memory"`). */
  readonly name: string;
}
