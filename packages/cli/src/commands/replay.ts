import type { DeliveryStatus, ReplayedDelivery, ReplaySelection } from "@postel/core";
import type { Args } from "../args.js";
import type { Command } from "../command.js";
import { compact } from "../compact.js";
import { usageError } from "../exit-codes.js";
import type { Output } from "../output.js";
import { PROGRESS_OPTION, progressLine } from "../progress.js";
import type { OperatorAction } from "../record-action.js";
import { TIME_RANGE_OPTIONS } from "./messages.js";

const REPLAYABLE: readonly DeliveryStatus[] = ["succeeded", "failed", "dead-lettered", "expired"];

const command: Command = {
  name: "replay",
  summary: "Send finished deliveries again: by delivery or message id, or by endpoint and time range",
  options: {
    delivery: {
      type: "string",
      multiple: true,
      value: "<id>",
      description: "replay exactly this delivery, dlv_… (repeat, or comma-separate)",
    },
    message: { type: "string", multiple: true, value: "<id>", description: "replay this message (repeat)" },
    endpoint: {
      type: "string",
      value: "<id>",
      description:
        "replay this endpoint's deliveries (needs --since, --yes); with --message, only its delivery of each",
    },
    ...TIME_RANGE_OPTIONS,
    status: {
      type: "string",
      multiple: true,
      value: "<status>",
      description: `only deliveries in this status (repeat): ${REPLAYABLE.join(", ")}; default all`,
    },
    "fresh-webhook-id": {
      type: "boolean",
      description: "give replayed deliveries a new webhook-id, so deduplicating receivers process them again",
    },
    limit: { type: "string", value: "<n>", description: "at most this many deliveries (default 10000)" },
    yes: { type: "boolean", description: "confirm a bulk replay (--endpoint)" },
    "dry-run": {
      type: "boolean",
      description: "only count what would be replayed; change nothing (no --yes needed)",
    },
    progress: PROGRESS_OPTION,
  },
  details: [
    "--since/--until select messages by creation time. Progress goes to stderr on a terminal.",
    "JSON: { replayed, deliveries: [{ messageId, deliveryId, endpointId, webhookId }] }; with --dry-run,",
    "{ dryRun: true, wouldReplay, messages, deliveries }. A delivery still pending or held is refused (exit 2).",
    "Recorded in the audit log as delivery.replay (--delivery, or one --message with --endpoint),",
    "message.replay (--message) or endpoint.replay (--endpoint --since); a dry run records nothing.",
    "Examples:",
    "  postel replay --delivery dlv_01J...                       (one delivery, e.g. a dead letter)",
    "  postel replay --message msg_01J...",
    "  postel replay --message msg_01J... --endpoint ep_01J...   (that one delivery)",
    "  postel replay --endpoint ep_01J... --since 1d --status dead-lettered --dry-run",
    "  postel replay --endpoint ep_01J... --since 1d --status dead-lettered --yes",
  ],
  audited: true,
  async run({ args, out, open, now, record }) {
    args.expectPositionals(0);
    const dryRun = args.flag("dry-run");
    const selection = selectionOf(args, now(), dryRun);
    const status = args.strings("status");
    for (const s of status) {
      if (!REPLAYABLE.includes(s as DeliveryStatus)) {
        throw usageError(`--status must be one of ${REPLAYABLE.join(", ")}; got ${JSON.stringify(s)}.`);
      }
    }
    const limit = args.integer("limit", 1, 10_000_000);
    const progress = progressReporter(out, args.flag("progress") || out.stderrIsTTY);
    const deliveries = await (await open()).postel.outbound.replay(
      selection,
      compact({
        freshWebhookId: args.flag("fresh-webhook-id"),
        status: status.length > 0 ? (status as DeliveryStatus[]) : undefined,
        limit,
        onProgress: progress,
        dryRun,
      }),
    );
    const messages = new Set(deliveries.map((d) => d.messageId)).size;
    if (dryRun) {
      if (out.json) return out.data({ dryRun: true, wouldReplay: deliveries.length, messages, deliveries });
      return out.text(
        `Would replay ${deliveries.length} deliveries (of ${messages} messages); nothing was changed.`,
      );
    }
    await record(
      replayAction(selection, deliveries, {
        replayed: deliveries.length,
        fresh: args.flag("fresh-webhook-id"),
        status: status.length > 0 ? status.join(",") : undefined,
        limit,
      }),
    );
    if (out.json) return out.data({ replayed: deliveries.length, deliveries });
    out.text(
      deliveries.length === 0
        ? "Nothing to replay: no finished delivery matched."
        : `Replayed ${deliveries.length} deliveries of ${messages} messages; workers send them again.`,
    );
  },
};

/** What the command can select: deliveries, messages (one endpoint's delivery of each), or an endpoint's range. */
type Selection = Extract<
  ReplaySelection,
  { deliveryIds: string[] } | { messageIds: string[] } | { since: unknown }
>;

function selectionOf(args: Args, now: number, dryRun: boolean): Selection {
  const deliveryIds = args.strings("delivery").flatMap((ids) => ids.split(",").map((id) => id.trim()));
  const messageIds = args.strings("message");
  const endpointId = args.string("endpoint");
  if (deliveryIds.length > 0) {
    if (messageIds.length > 0 || endpointId !== undefined) {
      throw usageError("--delivery names the deliveries itself: leave out --message and --endpoint.");
    }
    return { deliveryIds: deliveryIds.filter((id) => id !== "") };
  }
  // With both: each message's delivery to that endpoint only (one dead letter, not all of them).
  if (messageIds.length > 0) return compact({ messageIds, endpointId });
  if (endpointId === undefined) {
    throw usageError(
      "Say what to replay: --delivery <id> or --message <id> (repeatable), or --endpoint <id> --since <time> --yes.",
    );
  }
  const since = args.time("since", now);
  if (since === undefined) throw usageError("--endpoint needs --since (e.g. --since 1d or an ISO time).");
  if (!args.flag("yes") && !dryRun) {
    throw usageError(
      "A replay by endpoint sends every matching delivery again (up to --limit); add --yes to confirm, or --dry-run to count them first.",
    );
  }
  return compact({ endpointId, since, until: args.time("until", now) });
}

// The dashboard's names: one delivery (a message × endpoint too) is delivery.replay, a whole message
// message.replay; a replay by endpoint and time range is endpoint.replay. Many ids go in the detail.
function replayAction(
  selection: Selection,
  replayed: ReplayedDelivery[],
  detail: NonNullable<OperatorAction["detail"]>,
): OperatorAction {
  const one = (ids: readonly string[]) => (ids.length === 1 ? ids[0]! : null);
  const many = (ids: readonly string[]) => (ids.length > 1 ? ids.join(",") : undefined);
  if ("deliveryIds" in selection) {
    const ids = selection.deliveryIds;
    return { action: "delivery.replay", target: one(ids), detail: { ...detail, deliveryIds: many(ids) } };
  }
  if ("messageIds" in selection) {
    const ids = selection.messageIds;
    const endpointId = selection.endpointId;
    if (ids.length === 1 && endpointId !== undefined) {
      const target = replayed[0]?.deliveryId ?? null;
      return { action: "delivery.replay", target, detail: { ...detail, messageId: ids[0], endpointId } };
    }
    return {
      action: "message.replay",
      target: one(ids),
      detail: { ...detail, messageIds: many(ids), endpointId },
    };
  }
  const { endpointId, since, until } = selection;
  const iso = (time: Date | number | undefined) =>
    time === undefined ? undefined : new Date(time).toISOString();
  return {
    action: "endpoint.replay",
    target: endpointId,
    detail: { ...detail, since: iso(since), until: iso(until) },
  };
}

// "replaying 1200/100000 (1%)".
function progressReporter(out: Output, enabled: boolean) {
  const report = progressLine(out, enabled);
  return ({ replayed, total }: { replayed: number; total: number }) =>
    report(
      `replaying ${replayed}/${total} (${total === 0 ? 100 : Math.floor((replayed / total) * 100)}%)`,
      replayed >= total,
    );
}

/** `replay`. */
export const replayCommands: Command[] = [command];
