import type { ReplayedDelivery } from "@postel/core";
import type { Html } from "@postel/web-kit";
import type { DeadLetter } from "@postel/core";
import { href, type PageContext } from "./pages/context.js";
import { deadLetterFilter } from "./pages/dead-letters.js";
import { secretPage } from "./pages/endpoints.js";
import { responder } from "./respond.js";

/** The overlaps the rotate form offers; anything else is refused rather than trusted. */
const OVERLAPS = new Set([0, 3_600_000, 86_400_000, 604_800_000]);
/** "Replay everything matching" stops after this many dead letters (one click must stay bounded). */
export const REPLAY_ALL_LIMIT = 10_000;
const BATCH = 500;

/** A POST the dashboard runs after its CSRF check: a redirect (303) or a page. */
export type Action = (ctx: PageContext, form: URLSearchParams, id: string) => Promise<Response | Html | null>;

const endpointPath = (id: string) => `/endpoints/${encodeURIComponent(id)}`;
const done = (ctx: PageContext, path: string, what: string, n?: number) =>
  responder.redirect(href(ctx, path, { done: what, n: n === undefined ? undefined : String(n) }));

/** Endpoint actions, keyed by the last path segment of `/endpoints/:id/<action>`. */
export const endpointActions: Record<string, Action> = {
  async enable(ctx, _form, id) {
    await ctx.ops.endpoints.enable(id);
    return done(ctx, endpointPath(id), "enabled");
  },
  async disable(ctx, _form, id) {
    await ctx.ops.endpoints.disable(id, "disabled from the dashboard");
    return done(ctx, endpointPath(id), "disabled");
  },
  async "rotate-secret"(ctx, form, id) {
    const overlap = Number(form.get("overlap"));
    if (!OVERLAPS.has(overlap)) return null;
    await ctx.ops.endpoints.rotateSecret(id, { overlap });
    return done(ctx, endpointPath(id), "rotated");
  },
  async "reveal-secret"(ctx, _form, id) {
    const endpoint = await ctx.ops.endpoints.get(id);
    if (!endpoint) return null;
    return secretPage(ctx, endpoint, await ctx.ops.endpoints.secret(id));
  },
};

/** `POST /messages/:id/replay`: every finished delivery of one message. */
export const replayMessage: Action = async (ctx, form, id) => {
  const replayed = await ctx.ops.replay({ messageId: id }, { freshWebhookId: form.get("fresh") === "1" });
  return done(ctx, `/messages/${encodeURIComponent(id)}`, "replayed", replayed.length);
};

/**
 * `POST /dead-letters/replay`: one row (`only`) or the checked rows (`delivery`), each a dead letter
 * named `<messageId> <endpointId>` (a delivery is a message × endpoint), so replaying one never
 * replays the message's other dead letters.
 */
export const replaySelected: Action = async (ctx, form) => {
  const only = form.get("only");
  const letters = (only ? [only] : form.getAll("delivery")).flatMap((value) => {
    const [messageId, endpointId, ...rest] = value.split(" ");
    return messageId && endpointId && rest.length === 0 ? [{ messageId, endpointId }] : [];
  });
  const replayed = await replayDeadLetters(ctx, letters, form.get("fresh") === "1");
  return done(ctx, "/dead-letters", "replayed", replayed);
};

/** `POST /dead-letters/replay-all`: everything the filter matches, up to `REPLAY_ALL_LIMIT`. */
export const replayMatching: Action = async (ctx, form) => {
  const filter = deadLetterFilter(form);
  const fresh = form.get("fresh") === "1";
  if (filter.endpointId !== undefined && filter.since === undefined && filter.until === undefined) {
    // The exact selection replay() has for it: this endpoint's dead letters, whatever their messages.
    const replayed = await ctx.ops.replay(
      { endpointId: filter.endpointId, since: 0 },
      { status: ["dead-lettered"], freshWebhookId: fresh, limit: REPLAY_ALL_LIMIT },
    );
    return done(ctx, "/dead-letters", "replayed", replayed.length);
  }
  const letters: DeadLetter[] = [];
  let cursor: string | undefined;
  do {
    const page = await ctx.ops.deadLetters.list({ ...filter, cursor, limit: BATCH });
    letters.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && letters.length < REPLAY_ALL_LIMIT);
  return done(
    ctx,
    "/dead-letters",
    "replayed",
    await replayDeadLetters(ctx, letters.slice(0, REPLAY_ALL_LIMIT), fresh),
  );
};

/** Replays exactly these dead letters: per endpoint, its deliveries of the given messages. */
async function replayDeadLetters(
  ctx: PageContext,
  letters: readonly { messageId: string; endpointId: string }[],
  fresh: boolean,
): Promise<number> {
  const byEndpoint = new Map<string, Set<string>>();
  for (const { messageId, endpointId } of letters) {
    byEndpoint.set(endpointId, (byEndpoint.get(endpointId) ?? new Set()).add(messageId));
  }
  const replayed: ReplayedDelivery[] = [];
  for (const [endpointId, messages] of byEndpoint) {
    const ids = [...messages];
    for (let i = 0; i < ids.length; i += BATCH) {
      const messageIds = ids.slice(i, i + BATCH);
      replayed.push(
        ...(await ctx.ops.replay(
          { messageIds, endpointId },
          { status: ["dead-lettered"], freshWebhookId: fresh },
        )),
      );
    }
  }
  return replayed.length;
}
