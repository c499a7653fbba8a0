import type { ClaimedDelivery } from "../storage/records.js";
import { type FanoutContext, fanOut } from "./fanout.js";

/**
 * Claims up to `limit` deliveries: new messages first (fanned out, their deliveries come back
 * leased), topped up with due retries. Returns them and how many messages were fanned out.
 */
export async function claimWork(
  ctx: FanoutContext,
  limit: number,
): Promise<{ fannedOut: number; deliveries: ClaimedDelivery[] }> {
  const { config, clock } = ctx;
  const fanned = await fanOut(ctx, limit);
  const deliveries = fanned.deliveries;
  if (deliveries.length < limit) {
    const now = clock.now();
    const due = await config.storage.claimDue({
      owner: config.workers.id,
      now,
      until: now + config.workers.leaseDurationMs,
      limit: limit - deliveries.length,
    });
    deliveries.push(...due);
  }
  return { fannedOut: fanned.messages, deliveries };
}
