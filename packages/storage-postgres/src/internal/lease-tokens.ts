import type { ClaimedDelivery, MessageRecord } from "@postel/core/storage";
import { type RawRow, toDelivery, toJoinedMessage } from "./rows.js";

/**
 * A condition that is always true and turns `synchronous_commit` off for the statement's own
 * transaction (evaluated once, as an init plan). For statements that only take leases: if the server
 * crashes before the commit reaches disk, the lease is lost and the work is simply due again, fenced
 * from the worker that held it. Any later synchronous commit (an outcome) flushes it anyway.
 */
export const LEASE_ONLY = `(SELECT set_config('synchronous_commit', 'off', true)) = 'off'`;

/**
 * The prefix of a clear message's lease token (`ORDERING_RULES.directHead`); an md5 in hex never has
 * it. A replay finds by it a key's message that may be in flight straight from its lease.
 */
export const CLEAR_PREFIX = "d.";

/**
 * SQL for a fresh lease token for the row whose id is the SQL expression `id`: the md5 of one random
 * UUID per statement and the row's id. Unique per lease as a UUID per row would be, at a fraction of
 * the cost: gen_random_uuid() draws fresh randomness from OpenSSL for every row (about 4 µs each).
 */
export function leaseToken(id: string): string {
  return `md5((SELECT gen_random_uuid()::text) || ${id})`;
}

/**
 * A claimed delivery row (delivery columns + `m_`-prefixed message columns) as core's record; `message`
 * when the caller already has the row's message record (deliveries of one message share it).
 */
export function toClaimedDelivery(
  row: RawRow,
  message: MessageRecord = toJoinedMessage(row),
): ClaimedDelivery {
  const delivery = toDelivery(row);
  return { delivery, message, leaseToken: delivery.leaseToken as string };
}
