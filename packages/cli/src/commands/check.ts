import type { OrderingKeysApi } from "@postel/core";
import type { Args, OptionSpec } from "../args.js";
import { countText } from "../capped-counts.js";
import {
  CHECK_NAMES,
  type CheckName,
  type CheckResult,
  checkThresholds,
  type Thresholds,
} from "../check-thresholds.js";
import type { Command } from "../command.js";
import { CliError, EXIT, usageError } from "../exit-codes.js";
import { formatDuration } from "../time.js";

const options: Record<`max-${CheckName}`, OptionSpec> = {
  "max-oldest-due": {
    type: "string",
    value: "<duration>",
    description: 'fail when the oldest due delivery has waited longer than this ("5m")',
  },
  "max-due": { type: "string", value: "<n>", description: "fail when more deliveries than this are due" },
  "max-dead-letters": {
    type: "string",
    value: "<n>",
    description: "fail when more deliveries than this are dead-lettered",
  },
  "max-failed": {
    type: "string",
    value: "<n>",
    description: "fail when more deliveries than this failed permanently (e.g. HTTP 410)",
  },
  "max-disabled": {
    type: "string",
    value: "<n>",
    description: "fail when more endpoints than this are disabled",
  },
  "max-held-keys": {
    type: "string",
    value: "<n>",
    description:
      'fail when more ordering keys than this are held (onKeyFailure "hold"; see `postel keys held`)',
  },
};

const command: Command = {
  name: "check",
  summary: "Compare the outbox with thresholds; exit 5 when one is crossed (for cron jobs and probes)",
  options,
  details: [
    "Give at least one threshold; each is the most that is still healthy (--max-dead-letters 0: any",
    "dead letter fails). Prints one line per check: its value, its threshold, OK or FAIL. A count",
    'shown as ">= 1000" stopped at stats()\'s cap; exact counts are read only when that cannot decide.',
    "Exits 0 when every check is OK and 5 when one fails, so a probe tells an unhealthy outbox (5)",
    "from a broken command (1, 2) or an unreachable database (4).",
    "JSON: { ok, checks: [{ name, value, atLeast, threshold, ok }] } (oldest-due in milliseconds,",
    "null when nothing is due).",
    "Example (cron): postel check --max-oldest-due 5m --max-dead-letters 0 --max-disabled 0 || page-me",
  ],
  async run({ args, out, open }) {
    args.expectPositionals(0);
    const thresholds = readThresholds(args);
    const { outbound } = (await open()).postel;
    const checks = await checkThresholds(
      (read) => outbound.stats(read),
      thresholds,
      (upTo) => countHeldKeys(outbound, upTo),
    );
    const failed = checks.filter((c) => !c.ok);
    if (out.json) {
      out.data({ ok: failed.length === 0, checks });
    } else {
      out.table(
        [
          { header: "CHECK", cell: (c: CheckResult) => c.name },
          { header: "VALUE", cell: (c) => shown(c.name, c.value, c.atLeast) },
          { header: "MAX", cell: (c) => shown(c.name, c.threshold, false) },
          { header: "RESULT", cell: (c) => (c.ok ? "OK" : "FAIL") },
        ],
        checks,
      );
    }
    if (failed.length > 0) {
      throw new CliError(
        "CHECK_FAILED",
        `${failed.length} of ${checks.length} checks failed: ${failed.map((c) => c.name).join(", ")}.`,
        EXIT.checkFailed,
      );
    }
  },
};

// Every threshold read before the database is opened: a bad value is a usage error, never a probe
// failure that looks like an outage.
function readThresholds(args: Args): Thresholds {
  const thresholds: Thresholds = {};
  for (const name of CHECK_NAMES) {
    const flag = `max-${name}`;
    const value =
      name === "oldest-due" ? args.duration(flag) : args.integer(flag, 0, Number.MAX_SAFE_INTEGER);
    if (value !== undefined) thresholds[name] = value;
  }
  if (Object.keys(thresholds).length === 0) {
    const flags = Object.entries(options).map(([flag, spec]) => `--${flag} ${spec.value}`);
    throw usageError(`Give at least one threshold: ${flags.join(", ")}.`);
  }
  return thresholds;
}

/** Held keys counted page by page, stopping at `upTo`. */
async function countHeldKeys(outbound: { orderingKeys: OrderingKeysApi }, upTo: number): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const limit = Math.min(1_000, upTo - count);
    const page = await outbound.orderingKeys.held(cursor === null ? { limit } : { limit, cursor });
    count += page.items.length;
    cursor = page.nextCursor;
  } while (cursor !== null && count < upTo);
  return Math.min(count, upTo);
}

function shown(name: CheckName, value: number | null, atLeast: boolean): string {
  if (name === "oldest-due") return value === null ? "none due" : formatDuration(value);
  return countText(value ?? 0, atLeast);
}

/** `check`. */
export const checkCommands: Command[] = [command];
