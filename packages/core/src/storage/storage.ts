import type {
  AttemptOutcome,
  AttemptRecord,
  ClaimedDelivery,
  DeadLetter,
  ClaimedMessage,
  DeliveryRecord,
  DeliveryStatus,
  EndpointFields,
  EndpointRecord,
  EndpointSecret,
  EndpointState,
  HealthStats,
  MessageRecord,
  MessageStatus,
  NewDelivery,
  NewMessage,
} from "./records.js";
import type { CredentialStore } from "./credentials-store.js";

export type { CredentialStore, StoredCredentials } from "./credentials-store.js";

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
   * backlog drains.
   */
  newest?: { since: number; limit: number };
}

/**
 * Tokens in an endpoint's rate-limit bucket at `now`: `tokens` at `at`, refilled at `rateLimit` per second
 * up to `max(1, rateLimit)`; a bucket never used (`tokens` null) is full. For `Storage` implementations.
 */
export function bucketTokens(tokens: number | null, at: number, rateLimit: number, now: number): number {
  const burst = Math.max(1, rateLimit);
  if (tokens === null) return burst;
  return Math.min(burst, tokens + (Math.max(0, now - at) * rateLimit) / 1000);
}

/** A claim of due deliveries (`claimDue`). */
export interface DueClaim extends LeaseRequest {
  /**
   * Endpoints whose deliveries this claim must leave alone: they are at their cap on this worker, so
   * their work stays due for a worker with room for it. Empty or absent: no endpoint is skipped.
   */
  skipEndpoints?: readonly string[];
}

/** One endpoint's part of a `claimLimited` call. */
export interface LimitedClaim {
  endpointId: string;
  /** Deliveries of it this worker has room for. */
  want: number;
  /** At most this many of its deliveries leased at once, by every worker together; null: no limit. */
  maxInFlight: number | null;
  /**
   * At most this many deliveries claimed per second, by every worker together: a token bucket kept in
   * storage, refilled at this rate up to `max(1, rateLimit)` tokens; null: no limit.
   */
  rateLimit: number | null;
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
}

/**
 * For `Storage` implementations: the outcomes `recordOutcomes` may apply, in order. A direct outcome
 * for a message an earlier one in the batch already fans out is dropped: its fence (the message's
 * un-fanned lease) no longer holds, so it is lease lost.
 */
export function firstDirectOutcomes(outcomes: DeliveryOutcome[]): DeliveryOutcome[] {
  const fanned = new Set<string>();
  return outcomes.filter((outcome) => {
    const messageId = outcome.newDelivery?.messageId;
    if (messageId === undefined) return true;
    if (fanned.has(messageId)) return false;
    fanned.add(messageId);
    return true;
  });
}

/** Result of `recordOutcomes`: ids whose lease was still held (written) and those refused. */
export interface RecordOutcomesResult {
  recorded: string[];
  /** Outcomes refused because the lease token no longer matched (lease lost); nothing was written. */
  leaseLost: string[];
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
}

/** Options of `enqueue` and `enqueueMany`. `Tx` is the storage's transaction handle type. */
export interface EnqueueOptions<Tx> {
  /** Join the caller's transaction: the message commits or rolls back with it. */
  tx?: Tx | undefined;
}

/**
 * One page of a storage listing: at most `limit` rows that come after `after` in the listing's own
 * order. Keyset paging on the unique id, so rows inserted between two pages never shift the rows
 * already listed (none is skipped or repeated).
 */
export interface PageRequest {
  limit: number;
  /** The id of the last row of the previous page (exclusive); absent for the first page. */
  after?: string | undefined;
}

/** Filter for `listMessages`. Newest first (by id), so `after` selects the messages with smaller ids. */
export interface MessageQuery extends PageRequest {
  status?: MessageStatus | undefined;
  type?: string | undefined;
  tenantId?: string | undefined;
  /** createdAt >= since */
  since?: number | undefined;
  /** createdAt < until */
  until?: number | undefined;
  /** Only ids at or above this one (the low end of a `messageWindow`). */
  from?: string | undefined;
}

/** Filter for `listEndpoints`. Oldest first (by id), so `after` selects the endpoints with larger ids. */
export interface EndpointQuery extends PageRequest {
  tenantId?: string | undefined;
  state?: EndpointState | undefined;
}

/**
 * Filter for `listDeadLetters`. Newest first by delivery id (ids sort by creation time), so `after`
 * (a delivery id) selects the dead letters with smaller ids.
 */
export interface DeadLetterQuery extends PageRequest {
  /**
   * Which ended-in-failure deliveries: `dead-lettered` (retries used up; the default) or `failed` (a
   * permanent failure: a non-retryable 4xx such as 410, or a forbidden address).
   */
  status?: FailureStatus | undefined;
  endpointId?: string | undefined;
  /** deadLetteredAt >= since */
  since?: number | undefined;
  /** deadLetteredAt < until */
  until?: number | undefined;
}

/** The terminal statuses of a delivery that ended in failure, listed by `listDeadLetters`. */
export type FailureStatus = "dead-lettered" | "failed";

/** What `recentAttempts` returns: attempts that started at or after `since`, oldest first, at most `limit`. */
export interface RecentAttemptsQuery {
  since: number;
  limit: number;
}

/**
 * Filter of `attemptsAfter`: attempts with ids above `after`, in id order, the filters applied before
 * the limit (so a quiet endpoint beside a busy one is found, never cut off by the busy one's rows).
 */
export interface AttemptFeedQuery {
  /** The id of the last attempt already read (exclusive); `idFloor("att", time)` starts at a time. */
  after: string;
  limit: number;
  /** Only this endpoint's attempts (deleted or not). */
  endpointId?: string | undefined;
  outcome?: AttemptOutcome | undefined;
  /** Only attempts of messages of this event type (exact). */
  type?: string | undefined;
}

/** One health bucket: the attempts started in the `HEALTH_BUCKET_MS` from `start`, and how many failed. */
export interface HealthBucket {
  start: number;
  attempts: number;
  /** Attempts that did not succeed (retryable and permanent alike). */
  failures: number;
}

/** Which health buckets `healthBuckets` reads: those starting at or after `since`, oldest first. */
export interface HealthBucketQuery {
  since: number;
  /**
   * Only this endpoint's buckets (deleted or not). Without it, every endpoint's buckets of one start
   * are summed into one.
   */
  endpointId?: string | undefined;
}

/** What `stats` counts: the queue as it stands at `now`, and health buckets starting at or after `since`. */
export interface StatsQuery {
  now: number;
  since: number;
  /** Only this endpoint (deleted or not): its line alone, totals of its work, its rows alone read. */
  endpointId?: string | undefined;
  /**
   * Stop counting at this many, so a backlog of millions costs what this many rows cost: per
   * endpoint, `due`, `held`, `deadLetters` and `failed` each stop at `countCap`, and `inFlight` and
   * `scheduled` each stop at it or together (then earliest `nextAttemptAt` first, so live leases,
   * which expire soon, are counted before retries that wait); `unfanned` stops at it too. A count that reaches the
   * cap means "at least". Absent: exact counts.
   */
  countCap?: number | undefined;
  /**
   * No live lease expires after this time (core passes `now` plus twice its own `leaseDuration`), so
   * a storage may look for lease owners only among the pending deliveries due by then and count the
   * later ones as scheduled without reading their rows. Absent: a lease may expire at any time.
   */
  leasesUntil?: number | undefined;
}

/** One endpoint's work, by state, at the time of a `stats` call. */
export interface DeliveryCounts {
  /** `pending`, due at or before `now`, not under a live lease (an expired lease is due). */
  due: number;
  /** `pending` under a live lease (`leaseToken` set, lease expiry after `now`). */
  inFlight: number;
  /** `pending`, not leased, due after `now` (retries and deferrals waiting). */
  scheduled: number;
  /** `held` (its endpoint is disabled). */
  held: number;
  /** `dead-lettered`. */
  deadLetters: number;
  /** `failed`: a permanent failure (non-retryable 4xx, forbidden address). */
  failed: number;
}

/** One live endpoint in `StorageStats`. */
export interface EndpointStatsRow extends DeliveryCounts {
  id: string;
  url: string;
  description: string | null;
  state: EndpointState;
  circuitOpenUntil: number | null;
  /** Attempts and failures in its health buckets starting at or after the query's `since`. */
  attempts: number;
  failures: number;
}

/** Result of `stats`: the whole queue, and every live endpoint (oldest first). */
export interface StorageStats {
  /** Every delivery, whatever its endpoint (a deleted endpoint's dead letters included). */
  totals: DeliveryCounts & {
    /** `nextAttemptAt` of the oldest due delivery; null when none is due. */
    oldestDueAt: number | null;
  };
  /** Messages not fanned out yet (`pending`, no deliveries created). */
  unfanned: number;
  endpoints: EndpointStatsRow[];
}

/** One endpoint's counts as a storage reads them for `stats`: every endpoint, deleted ones flagged. */
export interface EndpointStatsSource extends EndpointStatsRow {
  /** False for a deleted endpoint: counted in the totals, not listed. */
  live: boolean;
  /** `nextAttemptAt` of its oldest due delivery; null when none is due. */
  oldestDueAt: number | null;
}

/**
 * For `Storage` implementations that count per endpoint: the `StorageStats` of every endpoint's
 * counts (deleted ones included, so their dead letters reach the totals) and the un-fanned messages.
 */
export function statsOfEndpoints(endpoints: readonly EndpointStatsSource[], unfanned: number): StorageStats {
  const totals: StorageStats["totals"] = {
    due: 0,
    inFlight: 0,
    scheduled: 0,
    held: 0,
    deadLetters: 0,
    failed: 0,
    oldestDueAt: null,
  };
  const live: EndpointStatsRow[] = [];
  for (const { live: isLive, oldestDueAt, ...row } of endpoints) {
    totals.due += row.due;
    totals.inFlight += row.inFlight;
    totals.scheduled += row.scheduled;
    totals.held += row.held;
    totals.deadLetters += row.deadLetters;
    totals.failed += row.failed;
    if (oldestDueAt !== null) totals.oldestDueAt = Math.min(totals.oldestDueAt ?? oldestDueAt, oldestDueAt);
    if (isLive) live.push(row);
  }
  return { totals, unfanned, endpoints: live };
}

/** Which terminal deliveries `findReplayable` selects. */
export type ReplaySelector = (
  | {
      messageIds: string[];
      /** Only the deliveries to this endpoint (one per message): e.g. one dead letter of a message. */
      endpointId?: string | undefined;
    }
  | { endpointId: string; since: number; until: number }
) & {
  /**
   * Only deliveries in these (terminal) statuses; every terminal status when absent. Applied before
   * the limit, so a few failed deliveries are found among many succeeded ones.
   */
  statuses?: DeliveryStatus[] | undefined;
};

/** A delivery to reset to `pending` by `resetDeliveries`, with the `webhook-id` it will carry. */
export interface DeliveryReset {
  deliveryId: string;
  webhookId: string;
}

/** The outbox: written by `send()`, read once by fan-out. */
export interface OutboxStore<Tx> {
  /**
   * Insert one message (one INSERT, joining `tx` when given). When `idempotencyKey` is already used,
   * insert nothing and return the existing message's id with `reused: true`. Wakes listening workers
   * when the storage supports it (e.g. NOTIFY, delivered on commit).
   */
  enqueue(message: NewMessage, options?: EnqueueOptions<Tx>): Promise<{ id: string; reused: boolean }>;
  /**
   * Insert many messages atomically, in a few statements (e.g. one multi-row INSERT per chunk of
   * rows): in `tx` when given, else in one transaction of the storage's own, so either all of them are
   * written or none is. Returns one result per message, in input order, meaning what `enqueue` called
   * for each message in order would: a message whose `idempotencyKey` is already stored (or held by a
   * transaction that then commits) inserts nothing and gets that message's id with `reused: true`; a
   * key repeated within the batch is inserted once, by its first message, and later ones get that id
   * with `reused: true`. An id already stored fails the whole call (`InvalidInputError`). An empty
   * array returns `[]`. Wakes listening workers at most once per call (e.g. one NOTIFY, on commit).
   * `sendBatch()` calls it with at most 10,000 messages.
   */
  enqueueMany(
    messages: readonly NewMessage[],
    options?: EnqueueOptions<Tx>,
  ): Promise<{ id: string; reused: boolean }[]>;
  /**
   * Lease up to `limit` pending messages that have not been fanned out, oldest first. A message is
   * claimable when not fanned out and not currently leased (or its lease expired). Each claim gets a
   * fresh token. With `newest`, part of the claim comes from the newest end (see `FanoutClaim`).
   */
  claimFanout(lease: FanoutClaim): Promise<ClaimedMessage[]>;
  /**
   * Record fan-out atomically per message, fenced by its token (a lost lease writes nothing for that
   * message): insert its deliveries (`pending`, due `now`), mark it fanned out; zero deliveries →
   * `dispatched`; `expired: true` → `expired`. When `lease` is given, the new deliveries (except
   * `queued` ones) are returned already leased to the caller (saving a claim round trip).
   */
  recordFanout(
    results: FanoutResult[],
    now: number,
    lease?: { owner: string; until: number },
  ): Promise<ClaimedDelivery[]>;
  /**
   * Extend fan-out leases still held (token matches, message not fanned out yet) to `until`; returns
   * the ids of the messages whose lease was lost. Workers renew these while a direct delivery (see
   * `DeliveryOutcome.newDelivery`) is in flight.
   */
  renewFanoutLeases(leases: { messageId: string; token: string }[], until: number): Promise<string[]>;
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
   * Lease due deliveries of endpoints that have limits, honouring each limit across every worker that
   * shares the storage. Claims of one endpoint are serialised (a lock, or the single writer), and per
   * claim at most `want` are leased, at most `maxInFlight` minus its deliveries already leased (a lease
   * counts until its outcome is recorded or it expires), and at most the whole tokens in its bucket
   * (a new bucket is full; each delivery claimed spends one token). Earliest due first; leased like
   * `claimDue`. Workers never `claimDue` these endpoints' deliveries.
   */
  claimLimited(claims: LimitedClaim[], lease: Omit<LeaseRequest, "limit">): Promise<ClaimedDelivery[]>;
  /** Extend leases still held (token matches) to `until`; returns the ids whose lease was lost. */
  renewLeases(leases: { deliveryId: string; leaseToken: string }[], until: number): Promise<string[]>;
  /**
   * Record a batch of outcomes in one round trip. Per outcome, only if the lease token still matches:
   * apply the transition (clearing the lease), insert the attempt, add the attempt to the endpoint's
   * health bucket (`failures` counts every non-success attempt), bump `attemptsMade`. An outcome with
   * `newDelivery` inserts its delivery instead, fenced by its message's fan-out lease. Then every
   * message whose deliveries are now all terminal gets its final status: `dead-lettered` if any
   * delivery is dead-lettered, else `expired` if any expired, else `dispatched`; `finishedAt = now`.
   * Outcomes apply in order: a second direct outcome for a message the first already fanned out is
   * lease lost.
   */
  recordOutcomes(outcomes: DeliveryOutcome[], now: number): Promise<RecordOutcomesResult>;
  /** Move an endpoint's `held` deliveries back to `pending`, due `now`. Returns how many. */
  releaseHeld(endpointId: string, now: number): Promise<number>;
}

/** Endpoints, their secrets and their shared state-machine fields. */
export interface EndpointStore {
  createEndpoint(endpoint: EndpointRecord): Promise<void>;
  /** A live endpoint (deleted ones are never returned). */
  getEndpoint(id: string): Promise<EndpointRecord | null>;
  listEndpoints(query: EndpointQuery): Promise<EndpointRecord[]>;
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
   * Soft-delete: the endpoint disappears from reads; its `pending` and `held` deliveries become
   * `cancelled` (and their messages are finalised as in `recordOutcomes`). Returns false when missing.
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
  /** Add a secret (newest signs first) and set `expiresAt` on the older ones that have none. */
  addEndpointSecret(id: string, secret: EndpointSecret, previousExpireAt: number): Promise<void>;
  /** Attempts and failures recorded for the endpoint in health buckets starting at or after `since`. */
  endpointHealth(id: string, since: number): Promise<HealthStats>;
}

/**
 * Reads for the audit trail, dashboards and replay. Everything an operator reads often (`stats`,
 * `listDeadLetters`, `recentAttempts`, every first page) must cost what the live work and the rows
 * returned cost, never what the whole history costs: tables hold millions of finished rows.
 */
export interface AuditStore {
  getMessage(id: string): Promise<MessageRecord | null>;
  listMessages(query: MessageQuery): Promise<MessageRecord[]>;
  /**
   * The lowest of the `size` newest message ids below `after` (all ids when absent), or null when
   * fewer than `size` are left. Optional: with it, a listing filtered by type or tenant examines
   * one window of `size` messages per page (`listMessages` with `from`) instead of walking the whole
   * history for a value that matches few; a storage that has it must honour `MessageQuery.from`.
   */
  messageWindow?(after: string | undefined, size: number): Promise<string | null>;
  /**
   * Filters of `listMessages` the storage answers from an index that holds only the matching
   * messages, in id order (e.g. `(tenant_id, id)`): a listing filtered by these alone walks that
   * index, and is never cut into `messageWindow`s. Optional: without it every type or tenant
   * filter is searched window by window.
   */
  readonly indexedMessageFilters?: readonly "tenantId"[];
  /** Every delivery of a message, oldest first. */
  listDeliveries(messageId: string): Promise<DeliveryRecord[]>;
  /** Every attempt of a message (all its deliveries), in order of `startedAt`, then `attemptNumber`. */
  listAttempts(messageId: string): Promise<AttemptRecord[]>;
  /**
   * Dead-lettered deliveries (the `dead_letter` view), or with `status: "failed"` the permanently
   * failed ones, with their message's type and tenant, newest first by delivery id, optionally for
   * one endpoint (deleted ones included) and a range of `deadLetteredAt` (the delivery's
   * `updatedAt`). A page costs the rows it returns: each status has a partial index of its own.
   */
  listDeadLetters(query: DeadLetterQuery): Promise<DeadLetter[]>;
  /**
   * Attempts (of every delivery) that started at or after `since`, oldest first (by `startedAt`, then
   * id), at most `limit`. Its cost may grow with the attempts made since `since` and the live work,
   * never with older history. Storages may rely on two facts core guarantees: an attempt's id is a
   * time-sortable id made after the attempt started (`idFloor("att", since)` is a lower bound of the
   * ids of every attempt that started at or after `since`), and a delivery's `nextAttemptAt` is never
   * earlier than the start of any attempt it has made (it becomes a lease expiry, a retry time or the
   * time of a reset, all later), unless a worker made an attempt after its lease had expired.
   */
  recentAttempts(query: RecentAttemptsQuery): Promise<AttemptRecord[]>;
  /**
   * Attempts (of every delivery) with ids above `query.after`, lowest id first, at most `limit`, the
   * filters applied before the limit: a feed to follow, as `postel tail` does. Its cost may grow with
   * the attempts made since the time in `after` (see `idTime`) and the live work, never with older
   * history. An attempt's id is made when its response arrives and the attempt becomes visible when
   * its outcome commits, a little later: a reader that must see every attempt asks again from a
   * little before the last id it read and skips the ids it has. Optional: without it `postel tail`
   * falls back to `recentAttempts`, which cannot keep up with a busy drain.
   */
  attemptsAfter?(query: AttemptFeedQuery): Promise<AttemptRecord[]>;
  /**
   * The health buckets the workers keep (the counters behind `endpointHealth` and `stats`), one per
   * start, oldest first, with at least one attempt: the series behind the live view's charts and an
   * endpoint's "failing since". Reads the buckets in range and nothing else: per endpoint, a range of
   * its buckets' key. Optional: without it the charts and `endpoints.activity()` fall back to what
   * `stats` sums.
   */
  healthBuckets?(query: HealthBucketQuery): Promise<HealthBucket[]>;
  /** The queue by state, per endpoint and in total, and each endpoint's health since `query.since`. */
  stats(query: StatsQuery): Promise<StorageStats>;
  /**
   * How many deliveries are in each status, optionally for one endpoint. Counts every row of history:
   * for tests and small tools; dashboards use `stats`.
   */
  countDeliveries(endpointId?: string): Promise<Partial<Record<DeliveryStatus, number>>>;
}

/** Replay: select terminal deliveries and put them back in the queue. */
export interface ReplayStore {
  /**
   * Terminal deliveries (`succeeded`, `failed`, `dead-lettered`, `expired`) matching the selector —
   * for `endpointId`, those whose message was created in `[since, until)`. Capped at `limit`.
   */
  findReplayable(selector: ReplaySelector, limit: number): Promise<DeliveryRecord[]>;
  /**
   * Reset each delivery still terminal to `pending` (due `now`, retries and lease cleared, the given
   * `webhookId`) and its message to `pending` (`finishedAt` null), atomically. Returns the ids reset.
   */
  resetDeliveries(resets: DeliveryReset[], now: number): Promise<string[]>;
}

/** One batch of `pruneFinished`: which part of the history to look at. */
export interface PruneRequest {
  /** Delete finished messages whose `finishedAt` is before this time (epoch ms). */
  finishedBefore: number;
  /** Examine messages with ids after this one (exclusive); `""` starts at the oldest. */
  after: string;
  /**
   * ...and below this one (exclusive): `messageIdBound(finishedBefore)`. Ids sort by creation time and a
   * message finishes after it is created, so every message finished before `finishedBefore` lies below
   * it, and a batch walks the primary key instead of needing an index on `finishedAt`.
   */
  below: string;
  /** Examine at most this many messages, in id order. */
  limit: number;
}

/** What one `pruneFinished` batch deleted, and where the next batch starts. */
export interface PruneBatch {
  messages: number;
  deliveries: number;
  /** Attempt records deleted (every attempt of the deleted deliveries). */
  attempts: number;
  /** The `after` of the next batch (the last id examined), or null when no message is left in range. */
  next: string | null;
}

/** Retention: delete old finished history in small batches. */
export interface RetentionStore {
  /**
   * Examine the next `limit` messages of the range (`after` < id < `below`, in id order) and delete,
   * in one short transaction, each one that is finished (`dispatched`, `dead-lettered` or `expired`)
   * with `finishedAt < finishedBefore` and no delivery in a non-terminal status, together with all its
   * deliveries and attempts: never part of a message. Messages another transaction holds (a replay,
   * a worker) are skipped, never waited for (`FOR UPDATE SKIP LOCKED`); claims are never blocked.
   */
  pruneFinished(request: PruneRequest): Promise<PruneBatch>;
  /**
   * Delete at most `limit` endpoint health buckets (the attempt and failure counters behind `stats()`,
   * `endpointHealth` and the dashboard's health chart) that started before `startedBefore`, of any
   * endpoint, deleted ones included; returns how many went. Called after `pruneFinished` until it
   * returns less than `limit`, so the counters are kept exactly as long as the history they count.
   */
  pruneHealth(request: HealthPruneRequest): Promise<number>;
}

/** One batch of `pruneHealth`. */
export interface HealthPruneRequest {
  /** Delete buckets whose start is before this time (epoch ms). */
  startedBefore: number;
  /** Delete at most this many buckets. */
  limit: number;
}

/** A JSON value of an audit entry's `detail`: flat, so a dashboard can show it as a table. */
export type AuditDetailValue = string | number | boolean | null;

/** One entry of the audit log: who did what to what, when. */
export interface AuditLogRecord {
  /** `aud_` + core's time-sortable id: entries list newest first by id. */
  id: string;
  /** When it was recorded (epoch ms, from Postel's clock). */
  at: number;
  tenantId: string | null;
  /** Who did it: the app's name for the user, 1 to 200 characters. */
  actor: string;
  /** What was done, e.g. `endpoint.create`: 1 to 64 of `a-z 0-9 _ . -`, starting with a letter. */
  action: string;
  /** What it was done to, e.g. an endpoint or message id (at most 200 characters); null for nothing. */
  target: string | null;
  /** Where it was done: `portal`, `dashboard`, `api` or the app's own name (same form as `action`). */
  source: string;
  /** Flat details (at most 32 keys, 4 KiB of JSON); null for none. */
  detail: Record<string, AuditDetailValue> | null;
  /**
   * Unique among the entries kept when set (at most 200 characters): a second entry with the same key
   * is not written. A pruned entry's key can be used again.
   */
  key: string | null;
}

/**
 * Filter of `listAuditEntries`. Newest first (by id), so `after` selects the entries with smaller
 * ids; `since` and `until` bound `at` (`at >= since`, `at < until`).
 */
export interface AuditLogQuery extends PageRequest {
  tenantId?: string | undefined;
  action?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
}

/** What `countAuditEntries` counts: entries of one tenant (null: tenant-less ones) with one of `actions`, at or after `since`. */
export interface AuditCountQuery {
  tenantId: string | null;
  actions: readonly string[];
  since: number;
}

/** One batch of `pruneAuditEntries`. */
export interface AuditPruneRequest {
  /** Delete entries whose `at` is before this time (epoch ms). */
  before: number;
  /** Delete at most this many. */
  limit: number;
}

/**
 * The audit log (an optional capability of `Storage`, see `Storage.auditLog`): an append-only record
 * of who did what, kept apart from the delivery history (retention and `prune()` never touch it).
 */
export interface AuditLogStore {
  /**
   * Appends the entry; returns false (writing nothing) when `key` is set and an entry with that key
   * exists. Atomic under concurrency: of any number of appends with one key, exactly one returns true
   * (a unique index and `ON CONFLICT DO NOTHING`). An id already stored fails the call.
   */
  appendAuditEntry(entry: AuditLogRecord): Promise<boolean>;
  /**
   * Entries matching the query, newest first by id, ids below `after`, at most `limit`. A page costs
   * the rows it returns (indexes on `(tenant_id, id)` and `id`), whatever the log holds.
   */
  listAuditEntries(query: AuditLogQuery): Promise<AuditLogRecord[]>;
  /**
   * How many entries of `tenantId` have one of `actions` and `at >= since` (rate limits count
   * with it); its cost is bounded by the tenant's entries since `since`. No actions: 0.
   */
  countAuditEntries(query: AuditCountQuery): Promise<number>;
  /** Deletes at most `limit` entries with `at < before`, oldest first; returns how many went. */
  pruneAuditEntries(request: AuditPruneRequest): Promise<number>;
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
 * Everything Postel needs from a database, as a handful of role interfaces with domain verbs.
 * Implementations: `InMemoryStorage` (core), `@postel/storage-postgres`, `@postel/storage-sqlite`.
 * Prove a new one with `runStorageConformance` from `@postel/core/testing`.
 */
export interface Storage<Tx = never>
  extends OutboxStore<Tx>,
    DeliveryQueue,
    EndpointStore,
    AuditStore,
    ReplayStore,
    RetentionStore,
    StorageLifecycle {
  /** A short name for logs and errors (`"postgres"`, `"sqlite"`, `"memory"`). */
  readonly name: string;
  /**
   * The audit log, an optional capability: `postel.outbound.auditLog` and the customer portal (its
   * action log, one-time sign-in links and per-tenant rate limits) need it, and refuse to run
   * without it (`AUDIT_LOG_UNSUPPORTED`). `InMemoryStorage`, `@postel/storage-postgres` and
   * `@postel/storage-sqlite` have it; `runStorageConformance` checks it when present.
   */
  readonly auditLog?: AuditLogStore;
  /**
   * Compare-and-set rewrites of stored credentials, an optional capability:
   * `postel.outbound.credentials.reencrypt()` needs it (`CREDENTIAL_REWRITE_UNSUPPORTED` without it).
   * `InMemoryStorage`, `@postel/storage-postgres` and `@postel/storage-sqlite` have it.
   */
  readonly credentials?: CredentialStore;
}

/** The transaction handle type of a storage (what `send(event, { tx })` accepts). */
export type TransactionOf<S> = S extends Storage<infer Tx> ? Tx : never;
