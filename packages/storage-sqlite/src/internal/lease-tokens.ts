import { randomUUID } from "node:crypto";
import type { Row } from "@libsql/client";
import type { ClaimedDelivery, LeaseRequest } from "@postel/core/storage";
import type { Db, Statement } from "./database.js";
import { JOINED_MESSAGE_COLUMNS, str, toDelivery, toJoinedMessage } from "./rows.js";

/**
 * Every row leased by one claim gets the token `<nonce>:<rank>:<id>`: fresh per claim, unique per row
 * (so one delivery's token never fences another), and findable as a prefix range in the same batch,
 * which lets a claim update and read back its rows in one write transaction. The zero-padded rank
 * (the due time a delivery had before the claim, or its position in a fan-out) makes token order
 * the order the rows were claimed in.
 */
export function newLeaseNonce(): string {
  return randomUUID();
}

/** SQL expression of a lease token (`:nonce` bound); in an UPDATE, `rank` reads the row's old value. */
export function leaseTokenSql(rank: string, id: string): string {
  return `(:nonce || ':' || printf('%015d', ${rank}) || ':' || ${id})`;
}

/**
 * Read back the deliveries leased under `nonce`, each with its message, in claim order. The bounds select the
 * tokens starting with `<nonce>:` (`;` is the character after `:`), through the lease-token index.
 */
export function selectLeased(nonce: string): Statement {
  return {
    sql: `SELECT d.*, ${JOINED_MESSAGE_COLUMNS}
      FROM postel_deliveries d JOIN postel_messages m ON m.id = d.message_id
      WHERE d.lease_token >= :low AND d.lease_token < :high
      ORDER BY d.lease_token`,
    args: { low: `${nonce}:`, high: `${nonce};` },
  };
}

/** A row of `selectLeased` as a `ClaimedDelivery`. */
export function toClaimed(row: Row): ClaimedDelivery {
  const delivery = toDelivery(row);
  return { delivery, message: toJoinedMessage(row), leaseToken: delivery.leaseToken ?? "" };
}

/** The named arguments every claim statement binds (`:owner`, `:until`, `:now`, `:limit`). */
export function leaseArgs(lease: LeaseRequest): { owner: string; until: number; now: number; limit: number } {
  return { owner: lease.owner, until: lease.until, now: lease.now, limit: Math.max(0, lease.limit) };
}

/**
 * Runs a lease renewal (an UPDATE that extends the leases still held, `RETURNING` their ids) and
 * returns those of `ids` it did not renew: their lease was lost.
 */
export async function renewHeld(db: Db, renewal: Statement, ids: string[]): Promise<string[]> {
  const [renewed] = await db.write([renewal]);
  const kept = new Set(renewed?.rows.map((row) => str(row, "id")));
  return ids.filter((id) => !kept.has(id));
}
