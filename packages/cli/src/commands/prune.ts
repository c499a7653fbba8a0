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
    "dry-run": {
      type: "boolean",
      description: "only count what would be deleted (reads every message it would take); delete nothing",
    },
    progress: PROGRESS_OPTION,
  },
  details: [
    "Deletes finished messages (dispatched, dead-lettered, expired) with all their deliveries and",
    "attempts, then the endpoint health counters of the same age; pending and unfinished work is kept.",
    "Ctrl-C stops after the batch in progress; run it again to go on. Recorded in the audit log as",
    "history.prune (the age and what was deleted); a dry run records nothing.",
    "JSON: { messages, deliveries, attempts, healthBuckets, complete, finishedBefore }; with --dry-run,",
    "{ dryRun: true, messages, deliveries, attempts, complete, finishedBefore } (health counters not counted).",
    "Examples:",
    "  postel prune --older-than 90d --dry-run",
    "  postel prune --older-than 90d --yes",
  ],
  audited: true,
  async run({ args, out, open, now, interrupted, record }) {
    args.expectPositionals(0);
    const olderThan = args.duration("older-than");
    if (olderThan === undefined) throw usageError('Say how old: --older-than <duration>, e.g. "90d".');
    const batchSize = args.integer("batch-size", 1, 10_000);
    const dryRun = args.flag("dry-run");
    if (!args.flag("yes") && !dryRun) {
      throw usageError(
        "prune deletes history for good; add --yes to confirm, or --dry-run to count it first.",
      );
    }
    const finishedBefore = now() - olderThan;
    const before = new Date(finishedBefore).toISOString();
    const stop = new AbortController();
    void interrupted.then(() => stop.abort());
    const progress = progressReporter(out, args.flag("progress") || out.stderrIsTTY, dryRun);
    const total = await (await open()).postel.outbound.prune(
      compact({ olderThan, batchSize, signal: stop.signal, onProgress: progress, dryRun }),
    );
    const early = total.complete ? "" : " Stopped early: run it again to go on.";
    if (dryRun) {
      const { healthBuckets: _, ...counted } = total;
      if (out.json) return out.data({ dryRun: true, ...counted, finishedBefore: before });
      return out.text(
        `Would delete ${total.messages} messages (${total.deliveries} deliveries, ${total.attempts} attempts) ` +
          `that finished before ${before}, and the endpoint health counters of that age; nothing was deleted.${early}`,
      );
    }
    await record({
      action: "history.prune",
      target: null,
      detail: { olderThan, finishedBefore: before, ...total },
    });
    if (out.json) return out.data({ ...total, finishedBefore: before });
    out.text(
      `Deleted ${total.messages} messages (${total.deliveries} deliveries, ${total.attempts} attempts) and ` +
        `${total.healthBuckets} health buckets older than ${before}.${early}`,
    );
  },
};

// "pruned 12000 messages, 0 health buckets"; "counted 12000 messages" on a dry run.
function progressReporter(out: Output, enabled: boolean, dryRun: boolean) {
  const report = progressLine(out, enabled);
  return ({ messages, healthBuckets, complete }: PruneResult) =>
    report(
      dryRun
        ? `counted ${messages} messages`
        : `pruned ${messages} messages, ${healthBuckets} health buckets`,
      complete,
    );
}

/** `prune`. */
export const pruneCommands: Command[] = [command];
