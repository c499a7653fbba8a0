/**
 * Skipping a held ordering key runs in two steps, as bulk replays do: the first POST answers a
 * confirmation naming the key and the head it leaves undelivered, with a one-time nonce; the POST of
 * that page skips it, once. The confirmation pins the head: if another head holds the key by then
 * (the next message failed too), nothing is skipped without the operator seeing that one first.
 */
import { type HeldKey, InvalidInputError, NotFoundError } from "@postel/core";
import { html, toBase64Url } from "@postel/web-kit";
import { type Action, done } from "./actions.js";
import type { Operations } from "./ops.js";
import { alreadyDonePage, confirmPage } from "./pages/confirm.js";
import { href } from "./pages/context.js";
import { printable } from "./pages/format.js";

/** `POST /held-keys/skip`: `endpoint` and `key`; then, from the confirmation, `head` and `nonce`. */
export const skipHeldKey: Action = async (ctx, form) => {
  const endpointId = form.get("endpoint");
  const key = form.get("key");
  if (!endpointId || key === null) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      "Skipping needs the endpoint and the key, as the Held keys page sends them. Nothing was skipped.",
    );
  }
  const back = href(ctx, "/held-keys");
  const held = await findHeldKey(ctx.ops, endpointId, key);
  if (held === null) {
    throw new NotFoundError(
      "KEY_NOT_HELD",
      "This key is not held on that endpoint (any more: its head was replayed or skipped meanwhile). Nothing was skipped.",
    );
  }
  const nonce = form.get("nonce");
  if (nonce === null) {
    return confirmPage(ctx, {
      title: "Skip this key?",
      count: 1,
      text: html`Key <strong class="mono">${printable(key)}</strong> moves on without its head: message <span class="mono">${held.messageId}</span> (delivery <span class="mono">${held.deliveryId}</span>, ${held.status}) is not delivered, and the <strong>${held.waiting}</strong> waiting behind it go now, in order. The head stays as it is and can still be replayed on its own. Nothing has changed yet.`,
      action: href(ctx, "/held-keys/skip"),
      fields: [
        ["endpoint", endpointId],
        ["key", key],
        ["head", held.deliveryId],
        ["nonce", toBase64Url(crypto.getRandomValues(new Uint8Array(18)))],
      ],
      button: "Skip the key",
      back,
    });
  }
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(nonce)) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      "This confirmation is not one the dashboard made (its nonce is missing); start again from the Held keys page. Nothing was skipped.",
    );
  }
  if (held.deliveryId !== form.get("head")) {
    throw new InvalidInputError(
      "KEY_HEAD_CHANGED",
      "Another delivery holds this key now (the one you confirmed was replayed or skipped, and the next failed too). Look at it on the Held keys page; nothing was skipped.",
    );
  }
  const claimed = await ctx.trail.claim(nonce, {
    actor: ctx.operator.actor,
    action: "ordering-key.skip",
    target: endpointId,
    detail: { orderingKey: key, skippedDeliveryId: held.deliveryId, waiting: held.waiting },
  });
  if (!claimed) {
    return alreadyDonePage(ctx, {
      text: "This confirmation was already sent once, and it ran then: nothing was skipped again.",
      links: [
        [href(ctx, "/audit", { action: "ordering-key.skip" }), "See it in the audit log"],
        [back, "Back to the held keys"],
      ],
    });
  }
  await ctx.ops.orderingKeys.skip(endpointId, key);
  return done(ctx, "/held-keys", "skipped");
};

/**
 * The held key `key` on `endpointId`, or null. `orderingKeys.held()` has no lookup by key: this pages
 * through the endpoint's held keys (few, in practice: each one is an incident).
 */
async function findHeldKey(ops: Operations, endpointId: string, key: string): Promise<HeldKey | null> {
  let cursor: string | undefined;
  do {
    const page = await ops.orderingKeys.held({ endpointId, cursor, limit: 1000 });
    const found = page.items.find((k) => k.orderingKey === key);
    if (found) return found;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return null;
}
