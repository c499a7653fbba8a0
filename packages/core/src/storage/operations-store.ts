import type {
  AttemptOutcome,
  AttemptRecord,
  DeadLetter,
  EndpointRecord,
  EndpointState,
  MessageRecord,
  MessageStatus,
} from "./records.js";

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

/**
 * The operations reads (an optional capability, `Storage.operations`): listings, the attempt feed,
 * health series and `stats` behind the operations API, the dashboard, the CLI and the portal. Everything an operator reads often (`stats`,
 * `listDeadLetters`, `recentAttempts`, every first page) must cost what the live work and the rows
 * returned cost, never what the whole history costs: tables hold millions of finished rows.
 */
export interface OperationsStore {
  /** A page of live endpoints (`postel.outbound.endpoints.list()`), oldest first. */
  listEndpoints(query: EndpointQuery): Promise<EndpointRecord[]>;
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
}
