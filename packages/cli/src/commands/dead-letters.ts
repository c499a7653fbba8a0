import type { DeadLetter, DeadLettersApi } from "@postel/core";
import { type Command, nextPageHint, PAGE_OPTIONS, pageLimit } from "../command.js";
import { compact } from "../compact.js";
import type { OpenDatabase } from "../database.js";
import { formatTime } from "../time.js";
import { TIME_RANGE_OPTIONS } from "./messages.js";

/** What tells the two lists of finished failures apart; the rest they share. */
interface FailureList {
  name: string;
  summary: string;
  /** `postel.outbound.deadLetters` or `postel.outbound.failed`. */
  list(outbound: OpenDatabase["postel"]["outbound"]): DeadLettersApi;
  /** The column of when each delivery ended so, and what --since/--until mean. */
  endedHeader: string;
  ended: string;
  empty: string;
  replay: string[];
}

function failureList(spec: FailureList): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    options: {
      endpoint: { type: "string", value: "<id>", description: "only this endpoint's" },
      ...TIME_RANGE_OPTIONS,
      ...PAGE_OPTIONS,
    },
    details: [
      `--since/--until apply to when the delivery ${spec.ended}.`,
      "JSON: { items: DeadLetter[], nextCursor } (each item's status says which list it is).",
      ...spec.replay,
    ],
    async run({ args, out, open, now }) {
      args.expectPositionals(0);
      const page = await spec.list((await open()).postel.outbound).list(
        compact({
          limit: pageLimit(args),
          endpointId: args.string("endpoint"),
          since: args.time("since", now()),
          until: args.time("until", now()),
          cursor: args.string("cursor"),
        }),
      );
      if (out.json) return out.data(page);
      if (page.items.length === 0) return out.note(spec.empty);
      out.table(
        [
          { header: "MESSAGE", cell: (d: DeadLetter) => d.messageId },
          { header: "ENDPOINT", cell: (d) => d.endpointId },
          { header: "TYPE", cell: (d) => d.type, shrink: true },
          { header: "ATTEMPTS", cell: (d) => d.attemptsMade },
          { header: spec.endedHeader, cell: (d) => formatTime(d.deadLetteredAt) },
          { header: "LAST ERROR", cell: (d) => d.lastError, shrink: true },
        ],
        page.items,
      );
      nextPageHint(out, page.nextCursor);
    },
  };
}

const deadLetters = failureList({
  name: "dead-letters list",
  summary: "Deliveries that ran out of retries, newest first",
  list: (outbound) => outbound.deadLetters,
  endedHeader: "DEAD-LETTERED",
  ended: "was dead-lettered",
  empty: "No dead letters.",
  replay: [
    "Replay them with `postel replay --delivery <id>`, or all of an endpoint's with",
    "`postel replay --endpoint <id> --since <time> --status dead-lettered --yes`.",
  ],
});

const failed = failureList({
  name: "failed list",
  summary: "Deliveries that failed permanently (a 410, a 400): not retried; newest first",
  list: (outbound) => outbound.failed,
  endedHeader: "FAILED",
  ended: "failed",
  empty: "No permanently failed deliveries.",
  replay: [
    "They are not retried: fix the receiver, then replay them with `postel replay --delivery <id>`, or",
    "all of an endpoint's with `postel replay --endpoint <id> --since <time> --status failed --yes`.",
  ],
});

/** `dead-letters list` and `failed list`. */
export const deadLetterCommands: Command[] = [deadLetters, failed];
