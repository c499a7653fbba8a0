import { fanoutMessageStatus } from "../rules.js";
import { REFUSED_FANOUT_RETRY_MS } from "../ordering-store.js";
import { randomUUID } from "node:crypto";
import { smallest } from "./smallest.js";
import { InvalidInputError } from "../../errors.js";
import { byIdempotencyKey } from "../enqueue-many-plan.js";
import type { ClaimedDelivery, ClaimedMessage, NewMessage } from "../records.js";
import type { FanoutResult, FanoutClaim } from "../storage.js";
import { compare, copy, type MemoryState, type MessageRow, pendingDelivery } from "./state.js";

/**
 * The handle `InMemoryStorage().transaction(fn)` passes to `fn`; give it to `send(event, { tx })`.
 * Messages enqueued with it become visible when `fn` resolves and are discarded when it throws.
 */
export interface InMemoryTransaction {
  readonly kind: "in-memory-transaction";
}

interface OpenTransaction {
  owner: MemoryOutbox;
  messages: NewMessage[];
  /** Ids of `messages`, so a duplicate id is found without walking them. */
  ids: Set<string>;
  open: boolean;
  /** Resolves when the transaction commits or rolls back (others wait on its idempotency keys). */
  settled: Promise<void>;
}

interface KeyReservation {
  tx: InMemoryTransaction;
  id: string;
  settled: Promise<void>;
}

const transactions = new WeakMap<InMemoryTransaction, OpenTransaction>();

/** Outbox verbs of `InMemoryStorage`, plus its transactions. */
export class MemoryOutbox {
  readonly #state: MemoryState;
  readonly #onVisible: () => void;
  /** Idempotency keys taken by open transactions, like a row lock held until commit. */
  readonly #reserved = new Map<string, KeyReservation>();

  constructor(state: MemoryState, onVisible: () => void) {
    this.#state = state;
    this.#onVisible = onVisible;
  }

  async enqueue(message: NewMessage, tx?: InMemoryTransaction): Promise<{ id: string; reused: boolean }> {
    const open = tx === undefined ? undefined : this.#open(tx);
    const key = message.idempotencyKey;
    while (key !== null) {
      const existing = this.#state.messageIdByKey.get(key);
      if (existing !== undefined) return { id: existing, reused: true };
      const reservation = this.#reserved.get(key);
      if (!reservation) break;
      if (reservation.tx === tx) return { id: reservation.id, reused: true };
      // Another transaction holds the key: wait for it to commit (then reuse) or roll back (then take it).
      await reservation.settled;
    }
    if (this.#state.messages.has(message.id) || open?.ids.has(message.id)) {
      throw new InvalidInputError("INVALID_ARGUMENT", `A message with id "${message.id}" already exists.`);
    }
    if (tx && open) {
      open.messages.push(copy(message));
      open.ids.add(message.id);
      if (key !== null) this.#reserved.set(key, { tx, id: message.id, settled: open.settled });
    } else {
      this.#insert(message);
      this.#onVisible();
    }
    return { id: message.id, reused: false };
  }

  /**
   * Enqueue each message in order on one transaction (the caller's, or one of its own that commits
   * when all are in), so a key repeated in the batch reuses its first message and a failure writes none.
   */
  async enqueueMany(
    messages: readonly NewMessage[],
    tx?: InMemoryTransaction,
  ): Promise<{ id: string; reused: boolean }[]> {
    if (messages.length === 0) return [];
    // Ids are checked up front, so a duplicate leaves even the caller's transaction untouched.
    const open = tx === undefined ? undefined : this.#open(tx);
    const ids = new Set<string>();
    for (const { id } of messages) {
      if (this.#state.messages.has(id) || open?.ids.has(id) || ids.has(id)) {
        throw new InvalidInputError("INVALID_ARGUMENT", `A message with id "${id}" already exists.`);
      }
      ids.add(id);
    }
    // Keyed messages go first, in key order (stably, so a key's first message takes it): a batch that
    // waits on another transaction's key holds only smaller keys, so two batches never wait on each other.
    const order = messages.map((_, i) => i).sort((a, b) => byIdempotencyKey(messages[a]!, messages[b]!));
    const all = async (on: InMemoryTransaction) => {
      const results: { id: string; reused: boolean }[] = new Array(messages.length);
      for (const i of order) results[i] = await this.enqueue(messages[i]!, on);
      return results;
    };
    return tx === undefined ? this.transaction(all) : all(tx);
  }

  /** Run `fn` in a transaction: its enqueues commit when it resolves and vanish when it throws. */
  async transaction<T>(fn: (tx: InMemoryTransaction) => Promise<T>): Promise<T> {
    const tx: InMemoryTransaction = Object.freeze({ kind: "in-memory-transaction" });
    let settle!: () => void;
    const open: OpenTransaction = {
      owner: this,
      messages: [],
      ids: new Set(),
      open: true,
      settled: new Promise((resolve) => {
        settle = resolve;
      }),
    };
    transactions.set(tx, open);
    try {
      const result = await fn(tx);
      for (const message of open.messages) this.#insert(message);
      if (open.messages.length > 0) this.#onVisible();
      return result;
    } finally {
      open.open = false;
      for (const [key, reservation] of this.#reserved) if (reservation.tx === tx) this.#reserved.delete(key);
      settle();
    }
  }

  async claimFanout(lease: FanoutClaim): Promise<ClaimedMessage[]> {
    // Free once its lease ran out; a lease without a token is a refused fan-out's wait
    // (ORDERING_RULES.fanoutInOrder), and a message never leased has 0.
    const free = (row: MessageRow) => row.fanoutLeaseUntil <= lease.now;
    const claimable = function* (state: MemoryState, since = Number.NEGATIVE_INFINITY) {
      for (const id of state.unfanned) {
        const row = state.messages.get(id)!;
        if (free(row) && row.record.createdAt >= since) yield row;
      }
    };
    const byAge = (a: MessageRow, b: MessageRow) =>
      a.record.createdAt - b.record.createdAt || compare(a.record.id, b.record.id);
    const newestLimit = Math.min(lease.newest?.limit ?? 0, lease.limit);
    const newest = smallest(claimable(this.#state, lease.newest?.since), newestLimit, (a, b) => byAge(b, a));
    const oldest = lease.newest?.only === true ? [] : smallest(claimable(this.#state), lease.limit, byAge);
    // Every message from the newest end, then the oldest ones up to the limit.
    const rows = [...new Set([...newest, ...oldest])].slice(0, lease.limit).sort(byAge);
    // Clear ones are decided before any is leased: only the earliest of a key here can be.
    const clear = rows.map((row) => this.#state.keyClear(row.record));
    return rows.map((row, i) => {
      // A clear message's token starts with "d." (no UUID does): a replay of its key finds it so.
      const token = clear[i] ? `d.${randomUUID()}` : randomUUID();
      row.fanoutToken = token;
      row.fanoutLeaseUntil = lease.until;
      return clear[i]
        ? { message: copy(row.record), token, clear: true as const }
        : { message: copy(row.record), token };
    });
  }

  async recordFanout(
    results: FanoutResult[],
    now: number,
    lease?: { owner: string; until: number },
  ): Promise<ClaimedDelivery[]> {
    const claimed: ClaimedDelivery[] = [];
    const state = this.#state;
    const fenced = (result: FanoutResult) => {
      const row = state.messages.get(result.messageId);
      return row !== undefined && row.fanoutToken === result.token && state.unfanned.has(result.messageId)
        ? row
        : undefined;
    };
    const recording = new Set(results.filter((result) => fenced(result)).map((result) => result.messageId));
    // In message id order: the earliest new delivery of a key goes first.
    const inOrder = [...results].sort((a, b) => compare(a.messageId, b.messageId));
    for (const result of inOrder) {
      const row = fenced(result);
      if (!row) continue;
      const message = row.record;
      if (state.earlierUnfanned(message, recording)) {
        // An earlier message of its key awaits fan-out elsewhere: no fence matches it now, and it is
        // claimed again after a short wait, once that one had its turn.
        row.fanoutToken = null;
        row.fanoutLeaseUntil = now + REFUSED_FANOUT_RETRY_MS;
        recording.delete(message.id);
        continue;
      }
      state.markFanned(message);
      row.fanoutToken = null;
      message.fannedOutAt = now;
      const status = fanoutMessageStatus(result);
      if (status !== null) {
        message.status = status;
        message.finishedAt = now;
        continue;
      }
      for (const fresh of result.deliveries) {
        if (fresh.orderingKey !== undefined) {
          // Waiting first; it goes at once when its key on the endpoint has nothing before it.
          const delivery = pendingDelivery(fresh, now, now);
          delivery.status = "waiting";
          state.insertDelivery(delivery);
          const head = state.settleKey(fresh.endpointId, fresh.orderingKey, now);
          if (head === delivery && lease && fresh.queued !== true) {
            const leaseToken = randomUUID();
            delivery.leaseToken = leaseToken;
            delivery.leaseOwner = lease.owner;
            delivery.nextAttemptAt = lease.until;
            claimed.push({ delivery: copy(delivery), message: copy(message), leaseToken });
          }
          continue;
        }
        const delivery =
          lease && fresh.queued !== true
            ? pendingDelivery(fresh, now, lease.until, { token: randomUUID(), owner: lease.owner })
            : pendingDelivery(fresh, now, now);
        state.insertDelivery(delivery);
        if (delivery.leaseToken !== null) {
          claimed.push({ delivery: copy(delivery), message: copy(message), leaseToken: delivery.leaseToken });
        }
      }
    }
    return claimed;
  }

  async renewFanoutLeases(leases: { messageId: string; token: string }[], until: number): Promise<string[]> {
    const lost: string[] = [];
    for (const { messageId, token } of leases) {
      const row = this.#state.messages.get(messageId);
      if (row && row.fanoutToken === token && this.#state.unfanned.has(messageId))
        row.fanoutLeaseUntil = until;
      else lost.push(messageId);
    }
    return lost;
  }

  #open(tx: InMemoryTransaction): OpenTransaction {
    const open = transactions.get(tx);
    if (!open || open.owner !== this) {
      throw new InvalidInputError(
        "INVALID_ARGUMENT",
        "`tx` is not a transaction of this InMemoryStorage; pass the handle given to `storage.transaction(fn)`.",
      );
    }
    if (!open.open) {
      throw new InvalidInputError(
        "INVALID_ARGUMENT",
        "`tx` belongs to a transaction that already committed or rolled back; enqueue inside `fn`.",
      );
    }
    return open;
  }

  #insert(message: NewMessage): void {
    const record = { ...copy(message), status: "pending" as const, fannedOutAt: null, finishedAt: null };
    this.#state.messages.set(message.id, { record, fanoutToken: null, fanoutLeaseUntil: 0 });
    this.#state.addUnfanned(message);
    if (message.idempotencyKey !== null) this.#state.messageIdByKey.set(message.idempotencyKey, message.id);
  }
}
