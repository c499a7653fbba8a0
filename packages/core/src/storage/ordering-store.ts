import type { DeliveryStatus } from "./records.js";

/**
 * A key held on an endpoint: its head (its earliest delivery not yet done) dead-lettered or failed for
 * good while the endpoint's `onKeyFailure` was `hold`, so the key's later deliveries wait until the
 * head is replayed or an operator skips it.
 */
export interface HeldKey {
  endpointId: string;
  orderingKey: string;
  /** The delivery holding the key. */
  deliveryId: string;
  messageId: string;
  /** The head's status: `dead-lettered` or `failed` (a replay of the head releases the hold). */
  status: DeliveryStatus;
  /** Its last error, for the operator deciding between a replay and a skip. */
  lastError: string | null;
  /** When the key was held. */
  heldAt: number;
  /** Deliveries of the key waiting behind it on this endpoint (at most the query's `countCap`). */
  waiting: number;
}

/** Which held keys `listHeldKeys` returns: by endpoint id then key, after the `after` key when given. */
export interface HeldKeyQuery {
  endpointId?: string | undefined;
  /** Keyset cursor: the last key of the previous page. */
  after?: { endpointId: string; orderingKey: string } | undefined;
  limit: number;
  /** Stop counting each key's `waiting` at this many. Default: exact. */
  countCap?: number | undefined;
}

/**
 * Ordered delivery (an optional capability, `Storage.ordering`): its presence says the delivery verbs
 * keep `ORDERING_RULES` for messages with an `orderingKey`; its verbs are what operators use on held
 * keys. `send({ orderingKey })` needs it (`ORDERING_UNSUPPORTED` without it).
 */
export interface OrderingStore {
  /** Held keys with their heads, by endpoint id then key (code-unit order), after `after`. */
  listHeldKeys(query: HeldKeyQuery): Promise<HeldKey[]>;
  /**
   * Release a held key without delivering its head (which stays as it is): the key's next waiting
   * delivery to the endpoint becomes `pending`, due `now`. Returns the head's delivery id, or null when
   * the key was not held.
   */
  skipHeldKey(endpointId: string, orderingKey: string, now: number): Promise<string | null>;
  /** Deliveries `waiting` behind their key's head, of one endpoint or all, counted up to `cap`. */
  countWaiting(query: { endpointId?: string | undefined; cap: number }): Promise<number>;
}

/**
 * How long a keyed message whose fan-out was refused (an earlier message of its key awaited fan-out
 * elsewhere: `ORDERING_RULES.fanoutInOrder`) stays unclaimable. Refusals happen only when two workers
 * fan out one key at once; a short wait beats claiming it straight back while the other is at work.
 */
export const REFUSED_FANOUT_RETRY_MS = 1_000;

/** A key's open deliveries on an endpoint: its head (`pending` or `held`) and those `waiting` behind it. */
export const OPEN_DELIVERY_STATUSES: readonly DeliveryStatus[] = ["pending", "held", "waiting"];

/**
 * What a storage with the `ordering` capability keeps, per endpoint E and ordering key K. A key's
 * *open* deliveries on E are its `pending`, `held` and `waiting` ones; its *head* is its `pending` or
 * `held` one. The conformance suite's `ordering` group tests each rule.
 */
export const ORDERING_RULES = {
  oneHead:
    "E has at most one pending or held delivery of K at any time; the others wait (`waiting`), are never " +
    "claimed, and are ordered by message id.",
  fanoutInOrder:
    "`recordFanout` records a keyed message only when no earlier message of its key (lower id) is still " +
    "pending and not fanned out, other than those this call records; otherwise it writes nothing for it " +
    "and gives it a lease of its own until `now + REFUSED_FANOUT_RETRY_MS` (no token: no fence matches " +
    "it), so it is claimed again after that, once the earlier one had its turn, and no worker spins on it.",
  headAtFanout:
    "A new delivery of K to E is `pending` (and may be leased) when E has no open delivery of K, K is not " +
    "held on E, and no earlier delivery of K to E is created in the same call; otherwise it is `waiting`.",
  nextOnEnd:
    "When a head of K on E becomes terminal (`recordOutcomes`, `deleteEndpoint` aside), E's earliest " +
    "waiting delivery of K becomes `pending`, due now — unless the outcome has `holdKey`: then K is held " +
    "on E by that delivery and its waiting deliveries stay waiting.",
  directHead:
    "`claimFanout` may mark a keyed message `clear`: no earlier message of its key awaits fan-out, no " +
    "message of its key that was fanned out is still pending, and its key is held on no endpoint. " +
    "Core may deliver a clear message straight from its lease " +
    "(`ClaimedDelivery.direct`); `recordOutcomes` inserts its delivery with its key, `waiting` when " +
    "its pair has a head by then (a replay), and applies `nextOnEnd` to it like any keyed outcome. A " +
    "fan-out it refused meanwhile may be claimed again at once.",
  leaseNext:
    "Given a `NextLease`, `recordOutcomes` may lease the delivery `nextOnEnd` lets go for an outcome with " +
    "`leaseNext` to its owner until its `until` (a fresh token, as `claimDue` gives) and return it, with " +
    "its message, in `next`; only those, and all of them: a storage that leases returns `next` (empty when " +
    "nothing was let go) whenever such an outcome ends. A storage that leases none returns no `next`: " +
    "the delivery is due now.",
  skip: "`skipHeldKey` releases the hold and lets E's earliest waiting delivery of K go, due now.",
  replayKeepsPlace:
    "A replayed delivery of K (`resetDeliveries`) keeps its place: it is `pending` when E has no head " +
    "of K and K is not held on E by another delivery (a hold it held itself is released); otherwise it " +
    "is `waiting`, ordered by its message id among the others. While a clear message of K is leased " +
    "(`directHead`), a pending one is due only when that lease ends: it may be in flight to E.",
  deleteEndpoint: "Deleting E cancels its waiting deliveries too and releases every key held on it.",
  retention: "A message whose delivery holds a key is never pruned.",
} as const;
