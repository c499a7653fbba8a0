/**
 * Bulk replays of dead letters or of permanently failed deliveries (the checked rows, or everything a
 * filter matches; a form's `status=failed` names the second list) run in two steps:
 * the first POST only counts (replay's `dryRun`) and answers a confirmation page carrying a one-time
 * nonce; the POST of that page spends the nonce in the audit trail, then replays. A second POST of
 * the same confirmation (a double click, a resubmit, two tabs) finds the nonce spent and runs nothing.
 */
import { InvalidInputError } from "@postel/core";
import { type Html, html, toBase64Url } from "@postel/web-kit";
import { type Action, done, replayDelivery } from "./actions.js";
import type { DeadLetterFilter } from "./ops.js";
import { alreadyDonePage, confirmPage } from "./pages/confirm.js";
import { href, type PageContext } from "./pages/context.js";
import { deadLetterFilter, type FinishedList, finishedList } from "./pages/dead-letters.js";

/** One bulk replay stops after this many deliveries (one click must stay bounded). */
export const REPLAY_ALL_LIMIT = 10_000;
const BATCH = 500;

type Letter = { messageId: string; endpointId: string };

/**
 * `POST /dead-letters/replay`: one row (`only`) runs at once; the checked rows (`delivery`, each a
 * dead letter named `<messageId> <endpointId>`, since a delivery is a message × endpoint) ask first.
 * Only deliveries of the form's list are replayed: a failed one named on the dead letters' form is not.
 */
export const replaySelected: Action = async (ctx, form) => {
  const list = finishedList(form);
  const fresh = form.get("fresh") === "1";
  const only = form.get("only");
  if (only) {
    const [letter] = lettersOf([only]);
    if (!letter) return null;
    const n = await replayDelivery(ctx, letter.messageId, letter.endpointId, fresh, [list.status]);
    return done(ctx, "/dead-letters", "replayed", n, { status: list.query });
  }
  const letters = lettersOf(form.getAll("delivery"));
  return bulk(ctx, form, list, {
    action: `${list.audit}.replay`,
    path: "/dead-letters/replay",
    target: null,
    what: `the checked ${list.many}`,
    fields: letters.map((l) => ["delivery", `${l.messageId} ${l.endpointId}`] as const),
    detail: {},
    letters: async () => letters.slice(0, REPLAY_ALL_LIMIT),
  });
};

/**
 * `POST /dead-letters/replay-all`: everything the filter matches in the form's list, up to
 * `REPLAY_ALL_LIMIT`. The confirmation pins the filter's end to the time it counted, so what runs is
 * what was counted: nothing dead-lettered (or failed) after the count is swept in.
 */
export const replayMatching: Action = async (ctx, form) => {
  const list = finishedList(form);
  const asked = deadLetterFilter(form);
  const until = form.has("nonce")
    ? asked.until
    : Math.min(asked.until ?? Number.POSITIVE_INFINITY, ctx.now + 1);
  const filter: DeadLetterFilter = { ...asked, until };
  const iso = (ms: number | undefined) => (ms === undefined ? "" : new Date(ms).toISOString());
  return bulk(ctx, form, list, {
    action: `${list.audit}.replay-all`,
    path: "/dead-letters/replay-all",
    target: filter.endpointId ?? null,
    what: `every ${list.one} matching the filter`,
    fields: [
      ["endpoint", filter.endpointId ?? ""],
      ["since", iso(filter.since)],
      ["until", iso(filter.until)],
    ],
    detail: { since: iso(filter.since) || null, until: iso(filter.until) || null },
    letters: () => matching(ctx, list, filter),
  });
};

interface BulkReplay {
  /** Its audit action. */
  action: string;
  path: string;
  target: string | null;
  /** "the checked dead letters", for the confirmation page. */
  what: string;
  /** The form fields that select the same deliveries again (the list's `status` is added). */
  fields: (readonly [string, string])[];
  detail: Record<string, string | null>;
  letters: () => Promise<Letter[]>;
}

async function bulk(
  ctx: PageContext,
  form: URLSearchParams,
  list: FinishedList,
  replay: BulkReplay,
): Promise<Response | Html> {
  const fresh = form.get("fresh") === "1";
  const nonce = form.get("nonce");
  const back = href(ctx, "/dead-letters", { status: list.query });
  if (nonce === null) {
    const count = await replayFinished(ctx, list, await replay.letters(), fresh, true);
    return confirmPage(ctx, {
      title: count === 0 ? "Nothing to replay" : `Replay ${count} ${count === 1 ? list.one : list.many}?`,
      count,
      text: html`${count === 0 ? `No ${list.one} matches` : html`This re-sends <strong>${count}</strong> ${count === 1 ? "delivery" : "deliveries"}:`} ${replay.what}${count >= REPLAY_ALL_LIMIT ? `, the first ${REPLAY_ALL_LIMIT.toLocaleString("en")} (run it again for the rest)` : ""}, ${fresh ? html`each with a fresh <span class="mono">webhook-id</span>` : html`keeping their <span class="mono">webhook-id</span>s`}. Nothing has changed yet.`,
      action: href(ctx, replay.path),
      fields: [
        ...(list.query ? [["status", list.query] as const] : []),
        ...replay.fields,
        ["count", String(count)],
        ["nonce", toBase64Url(crypto.getRandomValues(new Uint8Array(18)))],
        ...(fresh ? [["fresh", "1"] as const] : []),
      ],
      button: `Replay ${count} ${count === 1 ? "delivery" : "deliveries"}`,
      back,
    });
  }
  const count = Number(form.get("count"));
  if (
    !/^[A-Za-z0-9_-]{16,64}$/.test(nonce) ||
    !Number.isInteger(count) ||
    count < 1 ||
    count > REPLAY_ALL_LIMIT
  ) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      `This confirmation is not one the dashboard made (its nonce or count is missing); start again from the ${list.many} page. Nothing was replayed.`,
    );
  }
  const claimed = await ctx.trail.claim(nonce, {
    actor: ctx.operator.actor,
    action: replay.action,
    target: replay.target,
    detail: { ...replay.detail, confirmed: count, fresh },
  });
  if (!claimed) {
    return alreadyDonePage(ctx, {
      text: "This confirmation was already sent once, and it ran then: nothing was replayed again.",
      links: [
        [href(ctx, "/audit", { action: replay.action }), "See it in the audit log"],
        [back, `Back to the ${list.many}`],
      ],
    });
  }
  // At most what was counted, even if more match by now.
  const letters = (await replay.letters()).slice(0, count);
  const replayed = await replayFinished(ctx, list, letters, fresh, false);
  return done(ctx, "/dead-letters", "replayed", replayed, { status: list.query });
}

/** `<messageId> <endpointId>` values as dead letters; anything else is left out. */
function lettersOf(values: string[]): Letter[] {
  return values.flatMap((value) => {
    const [messageId, endpointId, ...rest] = value.split(" ");
    return messageId && endpointId && rest.length === 0 ? [{ messageId, endpointId }] : [];
  });
}

/** The deliveries of `list` that `filter` matches, newest first, up to `REPLAY_ALL_LIMIT`. */
async function matching(ctx: PageContext, list: FinishedList, filter: DeadLetterFilter): Promise<Letter[]> {
  const letters: Letter[] = [];
  let cursor: string | undefined;
  do {
    const page = await list.api(ctx.ops).list({ ...filter, cursor, limit: BATCH });
    letters.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && letters.length < REPLAY_ALL_LIMIT);
  return letters.slice(0, REPLAY_ALL_LIMIT);
}

/**
 * Replays (or with `dryRun` counts) exactly these deliveries, those still in the list's status: per
 * endpoint, its deliveries of the given messages.
 */
async function replayFinished(
  ctx: PageContext,
  list: FinishedList,
  letters: readonly Letter[],
  fresh: boolean,
  dryRun: boolean,
): Promise<number> {
  const byEndpoint = new Map<string, Set<string>>();
  for (const { messageId, endpointId } of letters) {
    byEndpoint.set(endpointId, (byEndpoint.get(endpointId) ?? new Set()).add(messageId));
  }
  let replayed = 0;
  for (const [endpointId, messages] of byEndpoint) {
    const ids = [...messages];
    for (let i = 0; i < ids.length; i += BATCH) {
      const messageIds = ids.slice(i, i + BATCH);
      replayed += (
        await ctx.ops.replay(
          { messageIds, endpointId },
          { status: [list.status], freshWebhookId: fresh, dryRun },
        )
      ).length;
    }
  }
  return replayed;
}
