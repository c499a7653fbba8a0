import type { AttemptRecord } from "@postel/core";
import type { Command } from "../command.js";
import type { Output } from "../output.js";
import { formatTime } from "../time.js";

const POLL_MS = 1000;
// Attempts are recorded when they finish, with the time they started: ask again this far back, and
// skip the ids already printed.
const OVERLAP_MS = 120_000;

const command: Command = {
  name: "tail",
  summary: "Print delivery attempts as they happen, from every instance, until Ctrl-C",
  options: {
    since: {
      type: "string",
      value: "<time>",
      description: 'start with attempts since then: ISO-8601 or how long ago (default "5m")',
    },
    endpoint: { type: "string", value: "<id>", description: "only this endpoint's attempts" },
  },
  details: [
    "Polls the database once a second. Ctrl-C exits 0.",
    "JSON: one attempt per line (NDJSON), as postel.outbound.messages.attempts() returns them.",
  ],
  async run({ args, out, open, now, interrupted }) {
    args.expectPositionals(0);
    const endpointId = args.string("endpoint");
    let since = args.time("since", now()) ?? now() - 300_000;
    const db = await open();
    let stopped = false;
    void interrupted.then(() => {
      stopped = true;
    });
    out.note(`Tailing attempts since ${formatTime(since)}; Ctrl-C to stop.`);
    const seen = new Map<string, number>();
    while (!stopped) {
      const polledAt = now();
      const attempts = await db.postel.outbound.attempts.recent({ since: Math.max(since, 0), limit: 1000 });
      for (const attempt of attempts) {
        if (seen.has(attempt.id) || (endpointId !== undefined && attempt.endpointId !== endpointId)) continue;
        seen.set(attempt.id, attempt.startedAt);
        print(out, attempt);
      }
      since = Math.max(since, polledAt - OVERLAP_MS);
      for (const [id, startedAt] of seen) if (startedAt < since) seen.delete(id);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([interrupted, new Promise((resolve) => (timer = setTimeout(resolve, POLL_MS)))]);
      clearTimeout(timer);
    }
  },
};

function print(out: Output, a: AttemptRecord): void {
  if (out.json) {
    out.data(a, true);
    return;
  }
  const status = a.statusCode ?? a.errorCode ?? "";
  out.text(
    [
      formatTime(a.startedAt),
      a.endpointId,
      a.messageId,
      `#${a.attemptNumber}`,
      out.paint(a.outcome, a.outcome === "success" ? "green" : a.outcome === "retryable" ? "yellow" : "red"),
      String(status),
      `${a.latencyMs}ms`,
      a.error ?? "",
    ]
      .join("  ")
      .trimEnd(),
  );
}

/** `tail`. */
export const tailCommands: Command[] = [command];
