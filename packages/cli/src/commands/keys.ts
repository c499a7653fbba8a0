import { type HeldKey, NotFoundError, type OrderingKeysApi } from "@postel/core";
import { type Command, nextPageHint, PAGE_OPTIONS, pageLimit } from "../command.js";
import { compact } from "../compact.js";
import { usageError } from "../exit-codes.js";
import { formatTime } from "../time.js";

const held: Command = {
  name: "keys held",
  summary: "Ordering keys held behind a head that failed (endpoints with --on-key-failure hold)",
  options: {
    endpoint: { type: "string", value: "<id>", description: "only this endpoint's held keys" },
    ...PAGE_OPTIONS,
  },
  details: [
    "By endpoint, then key. HEAD is the delivery that dead-lettered or failed for good and holds its key;",
    "WAITING counts the key's deliveries queued behind it on that endpoint.",
    "Release a key by replaying its head (`postel replay --delivery <head>`: it goes first, then the rest)",
    "or by skipping it (`postel keys skip <endpoint-id> <key>`: the head stays undelivered).",
    "JSON: { items: HeldKey[], nextCursor } (times in epoch milliseconds).",
  ],
  async run({ args, out, open }) {
    args.expectPositionals(0);
    const page = await (await open()).postel.outbound.orderingKeys.held(
      compact({ endpointId: args.string("endpoint"), limit: pageLimit(args), cursor: args.string("cursor") }),
    );
    if (out.json) return out.data(page);
    if (page.items.length === 0) return out.note("No held keys.");
    out.table(
      [
        { header: "ENDPOINT", cell: (k: HeldKey) => k.endpointId },
        { header: "KEY", cell: (k) => k.orderingKey, shrink: true },
        { header: "HEAD", cell: (k) => k.deliveryId },
        { header: "STATUS", cell: (k) => k.status },
        { header: "WAITING", cell: (k) => k.waiting },
        { header: "HELD SINCE", cell: (k) => formatTime(k.heldAt) },
        { header: "LAST ERROR", cell: (k) => k.lastError, shrink: true },
      ],
      page.items,
    );
    nextPageHint(out, page.nextCursor);
  },
};

const skip: Command = {
  name: "keys skip",
  summary: "Release a held key without delivering its head: the key's next message goes now",
  operands: ["<endpoint-id>", "<key>"],
  options: { yes: { type: "boolean", description: "confirm without being asked" } },
  details: [
    "The head stays as it is (dead-lettered or failed): replay it on its own later if it matters.",
    "To deliver the head first instead, replay it: `postel replay --delivery <head>`.",
    "Asks first on a terminal; elsewhere (a script, a pipe) it needs --yes. A key that is not held",
    "exits 3 (KEY_NOT_HELD). JSON: { endpointId, orderingKey, skippedDeliveryId }.",
    "Recorded in the audit log as ordering-key.skip (the endpoint, with the key and the skipped head).",
  ],
  audited: true,
  async run({ args, out, open, confirm, record }) {
    const endpointId = args.positional(0, "the endpoint id");
    const key = args.positional(1, "the ordering key");
    args.expectPositionals(2);
    const { orderingKeys } = (await open()).postel.outbound;
    if (!args.flag("yes")) {
      const head = await findHeldKey(orderingKeys, endpointId, key);
      if (head === null) throw keyNotHeld(endpointId, key);
      const yes = await confirm(
        `Skip key ${JSON.stringify(key)} on ${endpointId}? Its head ${head.deliveryId} (${head.status}) is left undelivered and the ${head.waiting} waiting behind it go on.`,
      );
      if (yes === null) {
        throw usageError(
          `keys skip moves ${JSON.stringify(key)} past its head ${head.deliveryId}, which is then never delivered in order; add --yes to confirm.`,
        );
      }
      if (!yes) return out.note(`Not skipped: ${JSON.stringify(key)} is still held.`);
    }
    const skipped = await orderingKeys.skip(endpointId, key);
    await record({
      action: "ordering-key.skip",
      target: endpointId,
      detail: { orderingKey: key, skippedDeliveryId: skipped.skippedDeliveryId },
    });
    if (out.json) return out.data(skipped);
    out.text(
      `Skipped ${JSON.stringify(key)} on ${endpointId}: its next message goes now; the head ${skipped.skippedDeliveryId} stays as it was.`,
    );
    out.note(`Replay the head on its own with: postel replay --delivery ${skipped.skippedDeliveryId}`);
  },
};

/**
 * The held key `key` on `endpointId`, or null. `orderingKeys.held()` has no lookup by key, so this
 * pages through the endpoint's held keys (few, in practice: each is an incident).
 */
async function findHeldKey(
  orderingKeys: OrderingKeysApi,
  endpointId: string,
  key: string,
): Promise<HeldKey | null> {
  let cursor: string | undefined;
  do {
    const page = await orderingKeys.held(compact({ endpointId, limit: 1000, cursor }));
    const found = page.items.find((k) => k.orderingKey === key);
    if (found) return found;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return null;
}

// Worded as the library's KEY_NOT_HELD, naming the command that lists them (exit 3).
function keyNotHeld(endpointId: string, key: string): NotFoundError {
  return new NotFoundError(
    "KEY_NOT_HELD",
    `Ordering key ${JSON.stringify(key)} is not held on endpoint ${JSON.stringify(endpointId)}: nothing was skipped. List the held keys with \`postel keys held\`.`,
  );
}

/** `keys held` and `keys skip`. */
export const keyCommands: Command[] = [held, skip];
