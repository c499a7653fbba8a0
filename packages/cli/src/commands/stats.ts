import type { Command } from "../command.js";
import type { EndpointStats } from "@postel/core";
import { formatDuration, percent, relative } from "../time.js";

const command: Command = {
  name: "stats",
  summary: "Backlog, dead letters and failure rates, overall and per endpoint",
  options: {
    window: {
      type: "string",
      value: "<duration>",
      description: 'attempts and failures over this long (default "1h")',
    },
  },
  details: ["JSON: the OutboundStats of postel.outbound.stats() (times in epoch milliseconds)."],
  async run({ args, out, open }) {
    args.expectPositionals(0);
    const windowMs = args.duration("window") ?? 3_600_000;
    const result = await (await open()).postel.outbound.stats({ window: windowMs });
    if (out.json) return out.data(result);
    const { backlog, attempts } = result;
    out.fields([
      [
        "backlog",
        `${backlog.due} due${backlog.oldestDueAt === null ? "" : ` (oldest ${relative(backlog.oldestDueAt, result.at)})`}, ` +
          `${backlog.inFlight} in flight, ${backlog.scheduled} scheduled, ${backlog.held} held, ${backlog.unfanned} not fanned out`,
      ],
      ["dead letters", result.deadLetters],
      [
        `last ${formatDuration(windowMs)}`,
        `${attempts.total} attempts, ${attempts.failures} failed${attempts.failureRate === null ? "" : ` (${percent(attempts.failureRate)})`}`,
      ],
    ]);
    if (result.endpoints.length === 0) return;
    out.text("");
    out.table(
      [
        { header: "ENDPOINT", cell: (e: EndpointStats) => e.id },
        { header: "STATE", cell: (e) => e.state },
        { header: "URL", cell: (e) => e.url, shrink: true },
        { header: "DUE", cell: (e) => e.due },
        { header: "IN FLIGHT", cell: (e) => e.inFlight },
        { header: "HELD", cell: (e) => e.held },
        { header: "DEAD", cell: (e) => e.deadLetters },
        { header: "ATTEMPTS", cell: (e) => e.attempts },
        { header: "FAILED", cell: (e) => percent(e.failureRate) },
      ],
      result.endpoints,
    );
  },
};

/** `stats`. */
export const statsCommands: Command[] = [command];
