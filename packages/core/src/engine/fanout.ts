import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config.js";
import { type EventFilter, matchesEventFilter } from "../event-filter.js";
import type { IdGenerator } from "../ids.js";
import { type ClaimedDelivery, type MessageRecord, pendingDelivery } from "../storage/records.js";
import type { FanoutResult } from "../storage/storage.js";
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
 * Claims up to `limit` new messages and resolves the endpoints each one matches *now* (late binding).
 * A message that matches exactly one endpoint is delivered straight from its leased message: its
 * delivery row is written once, with its outcome (`ClaimedDelivery.direct`). The others have their
 * deliveries recorded first, and those come back already leased to this worker.
 */
export async function fanOut(
  ctx: FanoutContext,
  limit: number,
): Promise<{ messages: number; deliveries: ClaimedDelivery[] }> {
  const { config, clock } = ctx;
  const { storage, workers } = config;
  const now = clock.now();
  const until = now + workers.leaseDurationMs;
  // The endpoint revision check runs beside the claim (two connections, one round trip of latency);
  // it still completes after the claim began, so late binding sees every endpoint written before.
  const [claimed, fresh] = await Promise.all([
    storage.claimFanout({ owner: workers.id, now, until, limit }),
    ctx.cache.fresh(),
  ]);
  if (claimed.length === 0) return { messages: 0, deliveries: [] };
  const endpoints = [...fresh.values()];
  const direct: ClaimedDelivery[] = [];
  const results: FanoutResult[] = [];
  for (const { message, token } of claimed) {
    if (message.expiresAt !== null && now >= message.expiresAt) {
      results.push({ messageId: message.id, token, deliveries: [], expired: true });
      continue;
    }
    const deliveries = matchingEndpoints(config, endpoints, message).map((endpoint) => ({
      id: ctx.newId("dlv"),
      messageId: message.id,
      endpointId: endpoint.record.id,
      webhookId: message.id,
      createdAt: now,
    }));
    const [only] = deliveries;
    if (only !== undefined && deliveries.length === 1) {
      direct.push({
        // As its row will read once inserted, leased under its message's fan-out token.
        delivery: pendingDelivery(only, now, until, { token, owner: workers.id }),
        message,
        leaseToken: token,
        direct: true,
      });
    } else results.push({ messageId: message.id, token, deliveries });
  }
  if (results.length === 0) return { messages: claimed.length, deliveries: direct };
  const at = clock.now();
  const recorded = await storage.recordFanout(results, at, {
    owner: workers.id,
    until: at + workers.leaseDurationMs,
  });
  return { messages: claimed.length, deliveries: [...direct, ...recorded] };
}

/**
 * The endpoints a message goes to: same tenant (both may be null), a matching type glob, then the
 * structural filter and the registered filter function. Disabled endpoints still get deliveries:
 * they are held, not lost, until the endpoint is enabled again.
 */
export function matchingEndpoints(
  config: OutboundConfig,
  endpoints: readonly CompiledEndpoint[],
  message: MessageRecord,
): CompiledEndpoint[] {
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
