import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { type EventFilter, matchesEventFilter } from "../event-filter.js";
import type { IdGenerator } from "../ids.js";
import { type ClaimedDelivery, type MessageRecord, pendingDelivery } from "../storage/records.js";
import type { FanoutClaim, FanoutDelivery, FanoutResult } from "../storage/storage.js";
import { toOutboundEvent } from "./deliver.js";
import type { CompiledEndpoint, EndpointCache } from "./endpoint-cache.js";

/** What fan-out needs. */
export interface FanoutContext {
  config: OutboundConfig;
  clock: Clock;
  newId: IdGenerator;
  cache: EndpointCache;
}

/**
 * Decides, per delivery fan-out creates, whether this worker starts it now (true) or leaves it queued
 * in storage because its endpoint has no room here.
 */
export type Admit = (endpoint: CompiledEndpoint) => boolean;

/** How a worker's scheduler takes part in fan-out. */
export interface FanoutOptions {
  admit?: Admit | undefined;
  /** Called with every endpoint the claimed messages have deliveries for, before any `admit`. */
  present?: ((endpointIds: Iterable<string>) => void) | undefined;
  /** Take this many of the claim's messages from the newest end (a backlog of new messages is draining). */
  catchUp?: number | undefined;
  /** Claim only messages sent within the last 250 ms, newest first (`FanoutClaim.newest.only`). */
  newestOnly?: boolean | undefined;
  /**
   * Given, the deliveries made straight from the outbox are handed to it as soon as they are known,
   * before fan-out writes the others, and left out of the pass's `deliveries`: a message sent now does
   * not wait for the fan-out of a backlog claimed with it.
   */
  startNow?: ((deliveries: ClaimedDelivery[]) => void) | undefined;
}

/** What one fan-out pass did. */
export interface FanoutPass {
  /** Messages claimed and fanned out. */
  messages: number;
  /** Deliveries created, queued ones included. */
  created: number;
  /** The deliveries this worker starts now, leased to it. */
  deliveries: ClaimedDelivery[];
  /** Of those, how many were handed to `startNow` already (and are not in `deliveries`). */
  startedEarly: number;
}

/**
 * Claims up to `limit` new messages and resolves the endpoints each one matches *now* (late binding).
 * A message that matches exactly one endpoint is delivered straight from its leased message: its
 * delivery row is written once, with its outcome (`ClaimedDelivery.direct`); a keyed one only when
 * storage found its key clear and it is its key's only message in the claim. The others have their
 * deliveries recorded first, and those come back already leased to this worker. A delivery `admit`
 * turns down is written queued instead (due now, not leased), for a worker with room for it.
 */
export async function fanOut(
  ctx: FanoutContext,
  limit: number,
  options: FanoutOptions = {},
): Promise<FanoutPass> {
  const { admit = always, present, catchUp = 0, startNow, newestOnly = false } = options;
  const { config, clock } = ctx;
  const { storage, workers } = config;
  const now = clock.now();
  const until = now + workers.leaseDurationMs;
  const claim: FanoutClaim = { owner: workers.id, now, until, limit };
  // Behind a backlog, part of the claim comes from the newest end: a message sent now is not queued
  // behind everything sent before it.
  if (newestOnly) claim.newest = { since: now - JUST_SENT_MS, limit, only: true };
  else if (catchUp > 0) claim.newest = { since: now - CATCH_UP_MS, limit: Math.min(catchUp, limit) };
  // The endpoint revision check runs beside the claim (two connections, one round trip of latency);
  // it still completes after the claim began, so late binding sees every endpoint written before.
  const [claimed, fresh] = await Promise.all([storage.claimFanout(claim), ctx.cache.fresh()]);
  if (claimed.length === 0) return { messages: 0, created: 0, deliveries: [], startedEarly: 0 };
  const endpoints = [...fresh.values()];
  const direct: ClaimedDelivery[] = [];
  const results: FanoutResult[] = [];
  let created = 0;
  let leased = 0;
  // Only a storage with the direct capability records a delivery with its outcome (newDelivery).
  const directOk = storage.direct !== undefined;
  // A clear keyed message (ORDERING_RULES.directHead) may go direct too, when it is its key's only one
  // here, and its request ends within half a lease: a replay of its key waits out the lease it saw.
  const keyedDirectOk = directOk && config.http.timeoutMs <= workers.leaseDurationMs / 2;
  const perKey = new Map<string, number>();
  for (const { message } of claimed) {
    const key = message.orderingKey;
    if (key !== undefined) perKey.set(key, (perKey.get(key) ?? 0) + 1);
  }
  const matched = claimed.map(({ message, token, clear }) => ({
    message,
    token,
    clear: clear === true,
    // null: the ttl elapsed before fan-out.
    endpoints:
      message.expiresAt !== null && now >= message.expiresAt
        ? null
        : matchingEndpoints(config, endpoints, message),
  }));
  if (present) {
    const ids: string[] = [];
    for (const m of matched) for (const endpoint of m.endpoints ?? []) ids.push(endpoint.record.id);
    present(ids);
  }
  for (const { message, token, clear, endpoints: matches } of matched) {
    const key = message.orderingKey;
    if (matches === null) {
      const result: FanoutResult = { messageId: message.id, token, deliveries: [], expired: true };
      if (key !== undefined) result.orderingKey = key;
      results.push(result);
      continue;
    }
    const deliveries: FanoutDelivery[] = [];
    for (const endpoint of matches) {
      const delivery: FanoutDelivery = {
        id: ctx.newId("dlv"),
        messageId: message.id,
        endpointId: endpoint.record.id,
        webhookId: message.id,
        createdAt: now,
      };
      if (key !== undefined) delivery.orderingKey = key;
      if (!admit(endpoint)) delivery.queued = true;
      deliveries.push(delivery);
    }
    created += deliveries.length;
    const [only] = deliveries;
    // A keyed message goes direct only when its key has nothing before it (`clear`) and nothing else here.
    if (
      directOk &&
      (key === undefined || (keyedDirectOk && clear && perKey.get(key) === 1)) &&
      only !== undefined &&
      deliveries.length === 1 &&
      only.queued !== true
    ) {
      direct.push({
        // As its row will read once inserted, leased under its message's fan-out token.
        delivery: pendingDelivery(only, now, until, { token, owner: workers.id }),
        message,
        leaseToken: token,
        direct: true,
      });
    } else {
      for (const d of deliveries) if (d.queued !== true) leased++;
      const result: FanoutResult = { messageId: message.id, token, deliveries };
      if (key !== undefined) result.orderingKey = key;
      results.push(result);
    }
  }
  // Direct deliveries need no write before they start: hand them over now, when someone takes them.
  const early = startNow !== undefined && direct.length > 0;
  if (early) startNow(direct);
  const unstarted = early ? [] : direct;
  const startedEarly = early ? direct.length : 0;
  if (results.length === 0) return { messages: claimed.length, created, deliveries: unstarted, startedEarly };
  const at = clock.now();
  const recorded = await storage.recordFanout(
    results,
    at,
    leased === 0 ? undefined : { owner: workers.id, until: at + workers.leaseDurationMs },
  );
  return { messages: claimed.length, created, deliveries: [...unstarted, ...recorded], startedEarly };
}

const always: Admit = () => true;

/** How recent a message must be for a catching-up claim to take it from the newest end. */
const CATCH_UP_MS = 1_000;
/**
 * ... and for a claim of the newest alone (`newestOnly`): the messages whose wake-up just arrived,
 * not a backlog sent a moment before (a clock behind by more than this only sends a message the
 * usual way, with the main claim).
 */
const JUST_SENT_MS = 250;

/**
 * The endpoints a message goes to: same tenant (both may be null), a matching type glob, then the
 * structural filter and the registered filter function; a test event only to its own endpoint. Disabled endpoints still get deliveries:
 * they are held, not lost, until the endpoint is enabled again.
 */
export function matchingEndpoints(
  config: OutboundConfig,
  endpoints: readonly CompiledEndpoint[],
  message: MessageRecord,
): CompiledEndpoint[] {
  // A test event goes to its one endpoint, and to no other.
  const target = message.testEndpointId;
  if (target !== undefined) return endpoints.filter(({ record }) => record.id === target);
  let event: ReturnType<typeof toOutboundEvent> | undefined;
  const eventOf = () => {
    event ??= toOutboundEvent(message);
    return event;
  };
  return endpoints.filter(({ record, matchesType }) => {
    if (record.tenantId !== message.tenantId || !matchesType(message.type)) return false;
    if (record.filter !== null && !matchesEventFilter(record.filter as EventFilter, eventOf())) return false;
    if (record.filterFn !== null) {
      const fn = config.filters[record.filterFn];
      // A filter that was unregistered or throws must not silently drop events: deliver, and let it fail loudly elsewhere.
      if (fn) {
        try {
          return fn(eventOf()) === true;
        } catch {
          return true;
        }
      }
    }
    return true;
  });
}
