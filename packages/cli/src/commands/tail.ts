import { type AttemptRecord, idFloor, idTime, isPostelError } from "@postel/core";
import { usageError } from "../exit-codes.js";
import type { Command } from "../command.js";
import type { OpenDatabase } from "../database.js";
import type { Output } from "../output.js";
import { formatTime } from "../time.js";

// Twice a second: an attempt is printed within a second of its response (bench `tail`: p99 1.27 s at one
// poll a second, beside a drain of 6,000 attempts/s).
const POLL_MS = 500;
const PAGE = 1000;
// An attempt's id is made when its response arrives and it becomes visible when its outcome
// commits, a moment later: each poll reads again from this far before the newest id printed and
// skips the ids it has, so an attempt that commits late is still printed, once.
const SETTLE_MS = 2000;
const OUTCOMES = ["success", "retryable", "permanent"] as const;

/** What `tail` asks for: the filters go into the query, never after its limit. */
interface Filters {
  endpointId?: string;
  outcome?: (typeof OUTCOMES)[number];
  type?: string;
}

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
    outcome: {
      type: "string",
      value: "<outcome>",
      description: "only success, retryable or permanent attempts",
    },
    type: { type: "string", value: "<type>", description: "only attempts of messages of this event type" },
  },
  details: [
    "Polls the database twice a second and prints every attempt once, in order, however busy the",
    "drain: each poll reads every attempt recorded since the last one, page after page.",
    "Ctrl-C exits 0.",
    "JSON: one attempt per line (NDJSON), as postel.outbound.attempts.after() returns them.",
  ],
  async run({ args, out, open, now, interrupted }) {
    args.expectPositionals(0);
    const filters: Filters = {};
    const endpointId = args.string("endpoint");
    if (endpointId !== undefined) filters.endpointId = endpointId;
    const outcome = args.string("outcome");
    if (outcome !== undefined) {
      if (!OUTCOMES.includes(outcome as Filters["outcome"] & string)) {
        throw usageError(`--outcome must be one of ${OUTCOMES.join(", ")}; got ${JSON.stringify(outcome)}.`);
      }
      filters.outcome = outcome as Filters["outcome"] & string;
    }
    const type = args.string("type");
    if (type !== undefined) filters.type = type;
    const since = args.time("since", now()) ?? now() - 300_000;
    const db = await open();
    let stopped = false;
    void interrupted.then(() => {
      stopped = true;
    });
    out.note(`Tailing attempts since ${formatTime(since)}; Ctrl-C to stop.`);
    const follow = new Follower(db, filters, since, now, (attempt) => print(out, attempt));
    while (!stopped) {
      await follow.poll(() => stopped);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([interrupted, new Promise((resolve) => (timer = setTimeout(resolve, POLL_MS)))]);
      clearTimeout(timer);
    }
  },
};

/** Reads the attempt feed from a moving point and prints each attempt once. */
class Follower {
  readonly #seen = new Set<string>();
  #newest: string | undefined;
  #feed = true;
  #since: number;

  constructor(
    readonly db: OpenDatabase,
    readonly filters: Filters,
    since: number,
    readonly now: () => number,
    readonly print: (attempt: AttemptRecord) => void,
  ) {
    this.#since = Math.max(0, since);
  }

  async poll(stopped: () => boolean): Promise<void> {
    if (!this.#feed) return this.#pollRecent();
    const settled = this.#newest === undefined ? this.#since : (idTime(this.#newest) ?? 0) - SETTLE_MS;
    const floor = idFloor("att", Math.max(this.#since, settled));
    // Forget what lies below the floor: it is never read again.
    for (const id of this.#seen) if (id < floor) this.#seen.delete(id);
    let after = floor;
    while (!stopped()) {
      let page: AttemptRecord[];
      try {
        page = await this.db.postel.outbound.attempts.after({ ...this.filters, after, limit: PAGE });
      } catch (error) {
        if (isPostelError(error) && error.code === "ATTEMPT_FEED_UNSUPPORTED") {
          this.#feed = false;
          return this.#pollRecent();
        }
        throw error;
      }
      for (const attempt of page) {
        if (this.#seen.has(attempt.id)) continue;
        this.#seen.add(attempt.id);
        this.print(attempt);
      }
      const last = page.at(-1)?.id;
      if (last !== undefined && (this.#newest === undefined || last > this.#newest)) this.#newest = last;
      if (page.length < PAGE || last === undefined) return;
      after = last;
    }
  }

  // A storage without the feed: the newest 1,000 attempts that started in the last two minutes,
  // filtered here (it cannot keep up with a busy drain; the feed can).
  async #pollRecent(): Promise<void> {
    const polledAt = this.now();
    const attempts = await this.db.postel.outbound.attempts.recent({ since: this.#since, limit: PAGE });
    for (const attempt of attempts) {
      if (this.#seen.has(attempt.id) || !matches(attempt, this.filters)) continue;
      this.#seen.add(attempt.id);
      this.print(attempt);
    }
    this.#since = Math.max(this.#since, polledAt - 120_000);
  }
}

function matches(attempt: AttemptRecord, filters: Filters): boolean {
  return (
    (filters.endpointId === undefined || attempt.endpointId === filters.endpointId) &&
    (filters.outcome === undefined || attempt.outcome === filters.outcome)
  );
}

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
