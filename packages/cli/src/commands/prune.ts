import type { PruneResult } from "@postel/core";
import type { Command } from "../command.js";
import { compact } from "../compact.js";
import { usageError } from "../exit-codes.js";
import type { Output } from "../output.js";
import { PROGRESS_OPTION, progressLine } from "../progress.js";

const command: Command = {
  name: "prune",
  summary: "Delete finished history older than an age (what retention does), a batch at a time",
  options: {
    "older-than": {
      type: "string",
      value: "<duration>",
      description: 'delete messages that finished longer ago than this, e.g. "90d" (required)',
    },
    "batch-size": {
      type: "string",
      value: "<n>",
      description: "messages examined per transaction, 1 to 10000 (default 500)",
    },
    yes: { type: "boolean", description: "confirm: the deleted history is gone for good" },
    progress: PROGRESS_OPTION,
  },
  details: [
    "Deletes finished messages (dispatched, dead-lettered, expired) with all their deliveries and",
    "attempts, then the endpoint health counters of the same age; pending and unfinished work is kept.",
    "Ctrl-C stops after the batch in progress; run it again to go on.",
    "JSON: { messages, deliveries, attempts, healthBuckets, complete, finishedBefore }.",
    "Example:",
    "  postel prune --older-than 90d --yes",
  ],
  async run({ args, out, open, now, interrupted }) {
    args.expectPositionals(0);
    const olderThan = args.duration("older-than");
    if (olderThan === undefined) throw usageError('Say how old: --older-than <duration>, e.g. "90d".');
    const batchSize = args.integer("batch-size", 1, 10_000);
    if (!args.flag("yes")) {
      throw usageError("prune deletes history for good; add --yes to confirm.");
    }
    const finishedBefore = now() - olderThan;
    const stop = new AbortController();
    void interrupted.then(() => stop.abort());
    const progress = progressReporter(out, args.flag("progress") || out.stderrIsTTY);
    const total = await (await open()).postel.outbound.prune(
      compact({ olderThan, batchSize, signal: stop.signal, onProgress: progress }),
    );
    if (out.json) return out.data({ ...total, finishedBefore: new Date(finishedBefore).toISOString() });
    out.text(
      `Deleted ${total.messages} messages (${total.deliveries} deliveries, ${total.attempts} attempts) and ` +
        `${total.healthBuckets} health buckets older than ${new Date(finishedBefore).toISOString()}.` +
        (total.complete ? "" : " Stopped early: run it again to go on."),
    );
  },
};

// "pruned 12000 messages, 0 health buckets".
function progressReporter(out: Output, enabled: boolean) {
  const report = progressLine(out, enabled);
  return ({ messages, healthBuckets, complete }: PruneResult) =>
    report(`pruned ${messages} messages, ${healthBuckets} health buckets`, complete);
}

/** `prune`. */
export const pruneCommands: Command[] = [command];
