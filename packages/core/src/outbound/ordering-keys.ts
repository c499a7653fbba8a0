import * as v from "valibot";
import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { InvalidInputError, NotFoundError } from "../errors.js";
import { requireCapability } from "../storage/capabilities.js";
import type { HeldKey } from "../storage/storage.js";
import { isLookupId } from "./lookup-id.js";
import {
  cursorSchema,
  decodeCursor,
  filterTextSchema,
  limitSchema,
  type Page,
  parseOptions,
  toPage,
} from "./page.js";
import { quote } from "./quote.js";

/** Filters of `orderingKeys.held`. */
export interface ListHeldKeysOptions {
  /** Only this endpoint's held keys. */
  endpointId?: string | undefined;
  /** Page size: 1 to 1000, default 100. */
  limit?: number | undefined;
  /** The `nextCursor` of the previous page; omit for the first page. */
  cursor?: string | undefined;
}

/** What `orderingKeys.skip` did. */
export interface SkippedKey {
  endpointId: string;
  orderingKey: string;
  /** The head left behind (it keeps its status and can still be replayed on its own). */
  skippedDeliveryId: string;
}

/**
 * `postel.outbound.orderingKeys`: the keys held on endpoints whose `onKeyFailure` is `"hold"`, and the
 * operator's way past one. Replaying a held head (`replay({ deliveryIds: [head] })`) releases its
 * key too, in place: the head goes first, then the messages that waited behind it.
 */
export interface OrderingKeysApi {
  /**
   * Held keys by endpoint, then key, one page at a time: each with its head (the delivery that
   * dead-lettered or failed), its last error and how many deliveries wait behind it.
   * @example
   * const { items } = await postel.outbound.orderingKeys.held({ endpointId });
   * for (const key of items) console.log(key.orderingKey, key.lastError, key.waiting);
   */
  held(options?: ListHeldKeysOptions): Promise<Page<HeldKey>>;
  /**
   * Moves a held key on without delivering its head: the key's next message goes now. Throws
   * `NotFoundError` (`KEY_NOT_HELD`) when the key is not held on that endpoint.
   * @example
   * await postel.outbound.orderingKeys.skip(endpointId, "sub_123");
   */
  skip(endpointId: string, orderingKey: string): Promise<SkippedKey>;
}

const ListHeldKeysSchema = v.strictObject({
  endpointId: v.optional(filterTextSchema),
  limit: limitSchema,
  cursor: cursorSchema,
});

/** Builds `postel.outbound.orderingKeys`. */
export function createOrderingKeysApi(deps: {
  config: OutboundConfig;
  clock: Clock;
  wake: () => void;
}): OrderingKeysApi {
  const { config, clock } = deps;
  return {
    async held(options) {
      const call = "orderingKeys.held()";
      const { cursor, limit, endpointId } = parseOptions(ListHeldKeysSchema, options, call);
      const after = afterKey(decodeCursor(cursor, "held-keys", call));
      const store = requireCapability(config.storage, "ordering", call);
      const rows = await store.listHeldKeys({ endpointId, after, limit: limit + 1 });
      return toPage(
        rows,
        limit,
        "held-keys",
        (row) => JSON.stringify([row.endpointId, row.orderingKey]),
        (row) => row,
      );
    },
    async skip(endpointId, orderingKey) {
      const call = "orderingKeys.skip()";
      if (typeof endpointId !== "string" || typeof orderingKey !== "string") {
        throw new InvalidInputError(
          "INVALID_ARGUMENT",
          `${call} takes an endpoint id and an ordering key, e.g. skip("ep_…", "sub_123").`,
        );
      }
      const store = requireCapability(config.storage, "ordering", call);
      const notHeld = () =>
        new NotFoundError(
          "KEY_NOT_HELD",
          `Ordering key ${quote(orderingKey)} is not held on endpoint ${quote(endpointId)}: nothing was skipped. orderingKeys.held() lists the held keys.`,
        );
      if (!isLookupId(endpointId) || !isLookupId(orderingKey)) throw notHeld();
      const skipped = await store.skipHeldKey(endpointId, orderingKey, clock.now());
      if (skipped === null) throw notHeld();
      deps.wake();
      return { endpointId, orderingKey, skippedDeliveryId: skipped };
    },
  };
}

/** The `after` of a held-keys cursor's key (`[endpointId, orderingKey]`), or undefined for the first page. */
function afterKey(key: string | undefined): { endpointId: string; orderingKey: string } | undefined {
  if (key === undefined) return undefined;
  const parsed: unknown = JSON.parse(key);
  if (Array.isArray(parsed) && typeof parsed[0] === "string" && typeof parsed[1] === "string") {
    return { endpointId: parsed[0], orderingKey: parsed[1] };
  }
  throw new InvalidInputError("INVALID_CURSOR", "cursor is not a cursor of orderingKeys.held().");
}
