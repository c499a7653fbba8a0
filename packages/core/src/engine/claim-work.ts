import type { ClaimedDelivery } from "../storage/records.js";
import type { LimitedClaim } from "../storage/storage.js";
import type { DueWork } from "./due-work.js";
import type { CompiledEndpoint } from "./endpoint-cache.js";
import { type Admit, type FanoutContext, fanOut } from "./fanout.js";

/** How a worker with a fair scheduler claims (see `FairShare`); absent: take everything. */
export interface ClaimShare {
  /** Messages to fan out in this claim (the pool's room divided by how many endpoints a message reaches). */
  messages: number;
  /** Whether a delivery fan-out creates starts now or stays queued. */
  admit: Admit;
  /** Told the endpoint of every delivery a fan-out creates, before `admit` is asked about any. */
  present?: (endpointIds: Iterable<string>) => void;
  /** Endpoints at their cap: due retries of theirs stay in storage. */
  skipEndpoints: readonly string[];
  /** A backlog of new messages is draining: take this many of the fan-out claim from the newest end. */
  catchUp: number;
  /** Endpoints with limits and this worker's room for each: claimed through `claimLimited` only. */
  limited: LimitedClaim[];
  /** Starts deliveries made straight from the outbox before the rest of the claim is written (`FanoutOptions.startNow`). */
  startNow?: (deliveries: ClaimedDelivery[]) => void;
  /** Whether due retries may be waiting (absent: always look, as `drain()` does). */
  due?: DueWork;
}

const limitedCache = new WeakMap<ReadonlyMap<string, CompiledEndpoint>, CompiledEndpoint[]>();

/** The endpoints with a `maxInFlight` or `rateLimit` (worked out once per endpoint list). */
export function limitedEndpoints(endpoints: ReadonlyMap<string, CompiledEndpoint>): CompiledEndpoint[] {
  let limited = limitedCache.get(endpoints);
  if (limited === undefined) {
    limited = [...endpoints.values()].filter(isLimited);
    limitedCache.set(endpoints, limited);
  }
  return limited;
}

/** Whether every worker together must keep the endpoint within a concurrency or rate limit. */
export function isLimited(endpoint: CompiledEndpoint): boolean {
  return endpoint.limits.maxInFlight !== null || endpoint.limits.rateLimit !== null;
}

/** What `claimLimited` asks for one endpoint, when this worker has room for `want` of its deliveries. */
export function limitedClaim(endpoint: CompiledEndpoint, want: number): LimitedClaim {
  const { maxInFlight, rateLimit } = endpoint.limits;
  return { endpointId: endpoint.record.id, want, maxInFlight, rateLimit };
}

/** What one claim did. */
export interface ClaimedWork {
  /** Messages fanned out. */
  fannedOut: number;
  /** Whether fan-out got as many messages as it asked for (more are probably waiting). */
  fanoutFull: boolean;
  /** Deliveries fan-out created, queued and waiting ones included. */
  created: number;
  /** Deliveries fan-out handed out leased, to start now (the rest were queued or wait behind their key). */
  started: number;
  /** Deliveries leased to this worker, to start now (those `startNow` took already left out). */
  deliveries: ClaimedDelivery[];
  /** Deliveries handed to `ClaimShare.startNow` during the claim. */
  startedEarly: number;
}

/**
 * Claims up to `limit` deliveries: new messages first (fanned out, their deliveries come back
 * leased), topped up with due retries (when `share.due` says some may be due), then with the due work
 * of endpoints that have limits (leased as their limits allow, whatever other workers hold).
 */
export async function claimWork(ctx: FanoutContext, limit: number, share?: ClaimShare): Promise<ClaimedWork> {
  const { config, clock } = ctx;
  const fanned = await fanOut(ctx, share?.messages ?? limit, {
    admit: share?.admit,
    present: share?.present,
    catchUp: share?.catchUp,
    startNow: share?.startNow,
  });
  const deliveries = fanned.deliveries;
  const { startedEarly } = fanned;
  const started = deliveries.length + startedEarly;
  if (started < limit && (share?.due?.worthLooking() ?? true)) {
    const now = clock.now();
    const skipping = share !== undefined && share.skipEndpoints.length > 0;
    share?.due?.looking();
    const due = await config.storage.claimDue({
      owner: config.workers.id,
      now,
      until: now + config.workers.leaseDurationMs,
      limit: limit - started,
      ...(skipping ? { skipEndpoints: share.skipEndpoints } : {}),
    });
    share?.due?.looked(due.length, limit - started, skipping);
    deliveries.push(...due);
  }
  const limited = share?.limited.filter((claim) => claim.want > 0) ?? [];
  // Endpoints with limits exist only on a storage that has them (LIMITS_UNSUPPORTED otherwise).
  const limits = config.storage.limits;
  if (limited.length > 0 && limits !== undefined) {
    const now = clock.now();
    const until = now + config.workers.leaseDurationMs;
    deliveries.push(...(await limits.claimLimited(limited, { owner: config.workers.id, now, until })));
  }
  const fanoutFull = fanned.messages >= (share?.messages ?? limit);
  return {
    fannedOut: fanned.messages,
    fanoutFull,
    created: fanned.created,
    started,
    startedEarly,
    deliveries,
  };
}
