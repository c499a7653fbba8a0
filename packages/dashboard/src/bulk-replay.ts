/**
 * Bulk replays of dead letters (the checked rows, or everything a filter matches) run in two steps:
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
import { deadLetterFilter } from "./pages/dead-letters.js";

/** One bulk replay stops after this many dead letters (one click must stay bounded). */
export const REPLAY_ALL_LIMIT = 10_000;
const BATCH = 500;

type Letter = { messageId: string; endpointId: string };

/**
 * `POST /dead-letters/replay`: one row (`only`) runs at once; the checked rows (`delivery`, each a
 * dead letter named `<messageId> <endpointId>`, since a delivery is a message × endpoint) ask first.
 */
export const replaySelected: Action = async (ctx, form) => {
  const fresh = form.get("fresh") === "1";
  const only = form.get("only");
  if (only) {
    const [letter] = lettersOf([only]);
    if (!letter) return null;
    const n = await replayDelivery(ctx, letter.messageId, letter.endpointId, fresh, ["dead-lettered"]);
    return done(ctx, "/dead-letters", "replayed", n);
  }
  const letters = lettersOf(form.getAll("delivery"));
  return bulk(ctx, form, {
    action: "dead-letters.replay",
    path: "/dead-letters/replay",
    target: null,
    what: "the checked dead letters",
    fields: letters.map((l) => ["delivery", `${l.messageId} ${l.endpointId}`] as const),
    detail: {},
    letters: async () => letters.slice(0, REPLAY_ALL_LIMIT),
  });
};

/**
 * `POST /dead-letters/replay-all`: everything the filter matches, up to `REPLAY_ALL_LIMIT`. The
 * confirmation pins the filter's end to the time it counted, so what runs is what was counted:
 * nothing dead-lettered after the count is swept in.
 */
export const replayMatching: Action = async (ctx, form) => {
  const asked = deadLetterFilter(form);
  const until = form.has("nonce")
    ? asked.until
    : Math.min(asked.until ?? Number.POSITIVE_INFINITY, ctx.now + 1);
  const filter: DeadLetterFilter = { ...asked, until };
  const iso = (ms: number | undefined) => (ms === undefined ? "" : new Date(ms).toISOString());
  return bulk(ctx, form, {
    action: "dead-letters.replay-all",
    path: "/dead-letters/replay-all",
    target: filter.endpointId ?? null,
    what: "every dead letter matching the filter",
    fields: [
      ["endpoint", filter.endpointId ?? ""],
      ["since", iso(filter.since)],
      ["until", iso(filter.until)],
    ],
    detail: { since: iso(filter.since) || null, until: iso(filter.until) || null },
    letters: () => matching(ctx, filter),
  });
};

interface BulkReplay {
  /** Its audit action. */
  action: string;
  path: string;
  target: string | null;
  /** "the checked dead letters", for the confirmation page. */
  what: string;
  /** The form fields that select the same dead letters again. */
  fields: (readonly [string, string])[];
  detail: Record<string, string | null>;
  letters: () => Promise<Letter[]>;
}

async function bulk(ctx: PageContext, form: URLSearchParams, replay: BulkReplay): Promise<Response | Html> {
  const fresh = form.get("fresh") === "1";
  const nonce = form.get("nonce");
  if (nonce === null) {
    const count = await replayDeadLetters(ctx, await replay.letters(), fresh, true);
    return confirmPage(ctx, {
      title:
        count === 0
          ? "Nothing to replay"
          : `Replay ${count} ${count === 1 ? "dead letter" : "dead letters"}?`,
      count,
      text: html`${count === 0 ? "No dead letter matches" : html`This re-sends <strong>${count}</strong> ${count === 1 ? "delivery" : "deliveries"}:`} ${replay.what}${count >= REPLAY_ALL_LIMIT ? `, the first ${REPLAY_ALL_LIMIT.toLocaleString("en")} (run it again for the rest)` : ""}, ${fresh ? html`each with a fresh <span class="mono">webhook-id</span>` : html`keeping their <span class="mono">webhook-id</span>s`}. Nothing has changed yet.`,
      action: href(ctx, replay.path),
      fields: [
        ...replay.fields,
        ["count", String(count)],
        ["nonce", toBase64Url(crypto.getRandomValues(new Uint8Array(18)))],
        ...(fresh ? [["fresh", "1"] as const] : []),
      ],
      button: `Replay ${count} ${count === 1 ? "delivery" : "deliveries"}`,
      back: href(ctx, "/dead-letters"),
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
      "This confirmation is not one the dashboard made (its nonce or count is missing); start again from the dead letters page. Nothing was replayed.",
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
        [href(ctx, "/dead-letters"), "Back to the dead letters"],
      ],
    });
  }
  // At most what was counted, even if more dead letters match by now.
  const letters = (await replay.letters()).slice(0, count);
  return done(ctx, "/dead-letters", "replayed", await replayDeadLetters(ctx, letters, fresh, false));
}

/** `<messageId> <endpointId>` values as dead letters; anything else is left out. */
function lettersOf(values: string[]): Letter[] {
  return values.flatMap((value) => {
    const [messageId, endpointId, ...rest] = value.split(" ");
    return messageId && endpointId && rest.length === 0 ? [{ messageId, endpointId }] : [];
  });
}

/** The dead letters `filter` matches, newest first, up to `REPLAY_ALL_LIMIT`. */
async function matching(ctx: PageContext, filter: DeadLetterFilter): Promise<Letter[]> {
  const letters: Letter[] = [];
  let cursor: string | undefined;
  do {
    const page = await ctx.ops.deadLetters.list({ ...filter, cursor, limit: BATCH });
    letters.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && letters.length < REPLAY_ALL_LIMIT);
  return letters.slice(0, REPLAY_ALL_LIMIT);
}

/** Replays (or with `dryRun` counts) exactly these dead letters: per endpoint, its deliveries of the given messages. */
async function replayDeadLetters(
  ctx: PageContext,
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
          { status: ["dead-lettered"], freshWebhookId: fresh, dryRun },
        )
      ).length;
    }
  }
  return replayed;
}
