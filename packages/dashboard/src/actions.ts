import { type AuditDetailValue, InvalidInputError, NotFoundError } from "@postel/core";
import type { DeliveryStatus } from "@postel/core";
import type { Html } from "@postel/web-kit";
import { href, type PageContext } from "./pages/context.js";
import { secretPage } from "./pages/endpoints.js";
import { responder } from "./respond.js";

/** The overlaps the rotate form offers; anything else is refused rather than trusted. */
export const OVERLAPS = new Map([
  [0, "no overlap"],
  [3_600_000, "1 hour"],
  [86_400_000, "24 hours"],
  [604_800_000, "7 days"],
]);

/** A POST the dashboard runs after its CSRF check: a redirect (303) or a page. */
export type Action = (ctx: PageContext, form: URLSearchParams, id: string) => Promise<Response | Html | null>;

const endpointPath = (id: string) => `/endpoints/${encodeURIComponent(id)}`;
const messagePath = (id: string) => `/messages/${encodeURIComponent(id)}`;

/** The redirect after an action (to `path` with `params`), whose `?done=` the layout turns into a fixed notice. */
export const done = (
  ctx: PageContext,
  path: string,
  what: string,
  n?: number,
  params: Record<string, string | undefined> = {},
) =>
  responder.redirect(href(ctx, path, { ...params, done: what, n: n === undefined ? undefined : String(n) }));

/** Writes the operator's action to the audit trail (source `"dashboard"`). */
export const record = (
  ctx: PageContext,
  action: string,
  target: string | null,
  detail: Record<string, AuditDetailValue> | null = null,
) => ctx.trail.record({ actor: ctx.operator.actor, action, target, detail });

/** Endpoint actions, keyed by the last path segment of `/endpoints/:id/<action>`. */
export const endpointActions: Record<string, Action> = {
  async enable(ctx, _form, id) {
    const before = await ctx.ops.endpoints.get(id);
    if (!before) return null;
    await ctx.ops.endpoints.enable(id);
    // From circuit-open this is "close the circuit": the log says which.
    await record(ctx, "endpoint.enable", id, { was: before.state });
    return done(ctx, endpointPath(id), "enabled");
  },
  async disable(ctx, _form, id) {
    await ctx.ops.endpoints.disable(id, "disabled from the dashboard");
    await record(ctx, "endpoint.disable", id);
    return done(ctx, endpointPath(id), "disabled");
  },
  async "rotate-secret"(ctx, form, id) {
    const overlap = Number(form.get("overlap"));
    if (!OVERLAPS.has(overlap)) {
      throw new InvalidInputError(
        "INVALID_ARGUMENT",
        `The overlap must be one the form offers: ${[...OVERLAPS.values()].join(", ")} (overlap=${[...OVERLAPS.keys()].join(", ")} in milliseconds). Nothing was rotated.`,
      );
    }
    await ctx.ops.endpoints.rotateSecret(id, { overlap });
    await record(ctx, "secret.rotate", id, { overlap });
    return done(ctx, endpointPath(id), "rotated");
  },
  async "reveal-secret"(ctx, _form, id) {
    const endpoint = await ctx.ops.endpoints.get(id);
    if (!endpoint) return null;
    const secret = await ctx.ops.endpoints.secret(id);
    // Recorded before it is shown: a reveal cannot be taken back, so none goes unrecorded.
    await record(ctx, "secret.reveal", id);
    return secretPage(ctx, endpoint, secret);
  },
};

/**
 * `POST /messages/:id/replay`: with `endpoint`, that one delivery (message × endpoint); without,
 * every finished delivery of the message.
 */
export const replayMessage: Action = async (ctx, form, id) => {
  const fresh = form.get("fresh") === "1";
  const endpointId = form.get("endpoint");
  if (endpointId)
    return done(ctx, messagePath(id), "replayed", await replayDelivery(ctx, id, endpointId, fresh));
  const replayed = await ctx.ops.replay({ messageId: id }, { freshWebhookId: fresh });
  await record(ctx, "message.replay", id, { fresh, replayed: replayed.length });
  return done(ctx, messagePath(id), "replayed", replayed.length);
};

/**
 * Replays the delivery of `messageId` to `endpointId` (in one of `statuses`, default any finished
 * one) and records it as `delivery.replay`; how many were re-enqueued (0 or 1).
 */
export async function replayDelivery(
  ctx: PageContext,
  messageId: string,
  endpointId: string,
  fresh: boolean,
  statuses?: DeliveryStatus[],
): Promise<number> {
  const delivery = (await ctx.ops.messages.deliveries(messageId)).find((d) => d.endpointId === endpointId);
  if (!delivery) {
    throw new NotFoundError(
      "DELIVERY_NOT_FOUND",
      "This message has no delivery to that endpoint; nothing was replayed.",
    );
  }
  const replayed = await ctx.ops.replay(
    { messageId, endpointId },
    statuses ? { freshWebhookId: fresh, status: statuses } : { freshWebhookId: fresh },
  );
  await record(ctx, "delivery.replay", delivery.id, {
    messageId,
    endpointId,
    fresh,
    replayed: replayed.length,
  });
  return replayed.length;
}
