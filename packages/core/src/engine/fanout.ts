import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config.js";
import { type EventFilter, matchesEventFilter } from "../event-filter.js";
import type { IdGenerator } from "../ids.js";
import type { ClaimedDelivery, MessageRecord } from "../storage/records.js";
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
 * Claims up to `limit` new messages, resolves the endpoints each one matches *now* (late binding),
 * and records their deliveries, which come back already leased to this worker.
 */
export async function fanOut(
  ctx: FanoutContext,
  limit: number,
): Promise<{ messages: number; deliveries: ClaimedDelivery[] }> {
  const { config, clock } = ctx;
  const { storage, workers } = config;
  const now = clock.now();
  // The endpoint revision check runs beside the claim (two connections, one round trip of latency);
  // it still completes after the claim began, so late binding sees every endpoint written before.
  const [claimed, fresh] = await Promise.all([
    storage.claimFanout({ owner: workers.id, now, until: now + workers.leaseDurationMs, limit }),
    ctx.cache.fresh(),
  ]);
  if (claimed.length === 0) return { messages: 0, deliveries: [] };
  const endpoints = [...fresh.values()];
  const results: FanoutResult[] = claimed.map(({ message, token }) => {
    if (message.expiresAt !== null && now >= message.expiresAt) {
      return { messageId: message.id, token, deliveries: [], expired: true };
    }
    const deliveries = matchingEndpoints(config, endpoints, message).map((endpoint) => ({
      id: ctx.newId("dlv"),
      messageId: message.id,
      endpointId: endpoint.record.id,
      webhookId: message.id,
      createdAt: now,
    }));
    return { messageId: message.id, token, deliveries };
  });
  const at = clock.now();
  const deliveries = await storage.recordFanout(results, at, {
    owner: workers.id,
    until: at + workers.leaseDurationMs,
  });
  return { messages: claimed.length, deliveries };
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
