import { type EndpointStats, HELD_KEYS_IN_STATS, type OutboundStats, STATS_COUNT_CAP } from "@postel/core";
import { type CappedCount, countText, endpointAtLeast, totalAtLeast, totalOf } from "../capped-counts.js";
import type { Command } from "../command.js";
import { formatDuration, percent, relative } from "../time.js";

const command: Command = {
  name: "stats",
  summary: "Backlog, dead letters, permanent failures and failure rates, overall and per endpoint",
  options: {
    window: {
      type: "string",
      value: "<duration>",
      description: 'attempts and failures over this long (default "1h")',
    },
    exact: {
      type: "boolean",
      description: `count every row; by default each count stops at ${STATS_COUNT_CAP} per endpoint (shown as >= ${STATS_COUNT_CAP})`,
    },
  },
  details: [
    "DEAD counts the deliveries that ran out of retries, FAILED those that failed permanently (a 410,",
    `a 400), and FAIL % the share of attempts over --window that failed. A count shown as >= ${STATS_COUNT_CAP}`,
    "stopped at the cap, which keeps stats cheap beside any backlog; --exact reads every row.",
    "On a storage with ordered delivery, `ordering` counts the deliveries waiting behind their key's head",
    `and the keys held (at most ${HELD_KEYS_IN_STATS} are read here; \`postel keys held\` lists them all).`,
    "JSON: the OutboundStats of postel.outbound.stats() (times in epoch milliseconds).",
  ],
  async run({ args, out, open }) {
    args.expectPositionals(0);
    const windowMs = args.duration("window") ?? 3_600_000;
    const result = await (await open()).postel.outbound.stats({
      window: windowMs,
      exact: args.flag("exact"),
    });
    if (out.json) return out.data(result);
    const { backlog, attempts } = result;
    const total = (name: CappedCount) => countText(totalOf(result, name), totalAtLeast(result, name));
    const unfanned = countText(
      backlog.unfanned,
      result.countCap !== null && backlog.unfanned >= result.countCap,
    );
    out.fields([
      [
        "backlog",
        `${total("due")} due${backlog.oldestDueAt === null ? "" : ` (oldest ${relative(backlog.oldestDueAt, result.at)})`}, ` +
          `${total("inFlight")} in flight, ${total("scheduled")} scheduled, ${total("held")} held, ${unfanned} not fanned out`,
      ],
      ["dead letters", total("deadLetters")],
      ["ordering", result.ordering === null ? null : orderingText(result.ordering, result.countCap)],
      ["failed", total("failed")],
      [
        `last ${formatDuration(windowMs)}`,
        `${attempts.total} attempts, ${attempts.failures} failed${attempts.failureRate === null ? "" : ` (${percent(attempts.failureRate)})`}`,
      ],
    ]);
    if (result.endpoints.length > 0) {
      const count = (name: CappedCount) => (e: EndpointStats) =>
        countText(e[name], endpointAtLeast(result, e, name));
      out.text("");
      out.table(
        [
          { header: "ENDPOINT", cell: (e: EndpointStats) => e.id },
          { header: "STATE", cell: (e) => e.state },
          { header: "URL", cell: (e) => e.url, shrink: true },
          { header: "DUE", cell: count("due") },
          { header: "IN FLIGHT", cell: count("inFlight") },
          { header: "HELD", cell: count("held") },
          { header: "DEAD", cell: count("deadLetters") },
          { header: "FAILED", cell: count("failed") },
          { header: "ATTEMPTS", cell: (e) => e.attempts },
          { header: "FAIL %", cell: (e) => percent(e.failureRate) },
        ],
        result.endpoints,
      );
    }
    if (result.capped)
      out.note(`Counts shown as ">= n" stopped at ${result.countCap}; --exact counts every row.`);
  },
};

// "3 waiting, 1 held key": null (no line) on a storage without ordered delivery.
function orderingText(ordering: NonNullable<OutboundStats["ordering"]>, cap: number | null): string {
  const waiting = countText(ordering.waiting, cap !== null && ordering.waiting >= cap);
  const n = ordering.heldKeys.length;
  const held = `${countText(n, n >= HELD_KEYS_IN_STATS)} held ${n === 1 ? "key" : "keys"}`;
  return `${waiting} waiting, ${held}${n > 0 ? " (postel keys held)" : ""}`;
}

/** `stats`. */
export const statsCommands: Command[] = [command];
