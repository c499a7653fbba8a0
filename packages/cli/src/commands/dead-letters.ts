import { type Command, nextPageHint, PAGE_OPTIONS, pageLimit } from "../command.js";
import { compact } from "../compact.js";
import type { DeadLetter } from "@postel/core";
import { formatTime } from "../time.js";
import { TIME_RANGE_OPTIONS } from "./messages.js";

const list: Command = {
  name: "dead-letters list",
  summary: "Deliveries that ran out of retries, newest first",
  options: {
    endpoint: { type: "string", value: "<id>", description: "only this endpoint's" },
    ...TIME_RANGE_OPTIONS,
    ...PAGE_OPTIONS,
  },
  details: [
    "--since/--until apply to when the delivery was dead-lettered.",
    "JSON: { items: DeadLetter[], nextCursor }. Replay them with `postel replay`.",
  ],
  async run({ args, out, open, now }) {
    args.expectPositionals(0);
    const page = await (await open()).postel.outbound.deadLetters.list(
      compact({
        limit: pageLimit(args),
        endpointId: args.string("endpoint"),
        since: args.time("since", now()),
        until: args.time("until", now()),
        cursor: args.string("cursor"),
      }),
    );
    if (out.json) return out.data(page);
    if (page.items.length === 0) return out.note("No dead letters.");
    out.table(
      [
        { header: "MESSAGE", cell: (d: DeadLetter) => d.messageId },
        { header: "ENDPOINT", cell: (d) => d.endpointId },
        { header: "TYPE", cell: (d) => d.type, shrink: true },
        { header: "ATTEMPTS", cell: (d) => d.attemptsMade },
        { header: "DEAD-LETTERED", cell: (d) => formatTime(d.deadLetteredAt) },
        { header: "LAST ERROR", cell: (d) => d.lastError, shrink: true },
      ],
      page.items,
    );
    nextPageHint(out, page.nextCursor);
  },
};

/** `dead-letters list`. */
export const deadLetterCommands: Command[] = [list];
