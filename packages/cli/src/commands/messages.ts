import type { AttemptRecord, DeliveryRecord, Message, MessageStatus } from "@postel/core";
import { type Command, nextPageHint, PAGE_OPTIONS, pageLimit } from "../command.js";
import { compact } from "../compact.js";
import { usageError } from "../exit-codes.js";
import { formatTime } from "../time.js";

const STATUSES: readonly MessageStatus[] = ["pending", "dispatched", "dead-lettered", "expired"];

/** `--since` / `--until` as help shows them. */
export const TIME_RANGE_OPTIONS = {
  since: {
    type: "string",
    value: "<time>",
    description: 'from this time: ISO-8601, or how long ago ("30s", "5m", "2h", "1d")',
  },
  until: { type: "string", value: "<time>", description: "before this time (same forms)" },
} as const;

const list: Command = {
  name: "messages list",
  summary: "List messages, newest first",
  options: {
    status: { type: "string", value: "<status>", description: `only this status: ${STATUSES.join(", ")}` },
    type: { type: "string", value: "<type>", description: "only this event type" },
    tenant: { type: "string", value: "<id>", description: "only this tenant's messages" },
    ...TIME_RANGE_OPTIONS,
    ...PAGE_OPTIONS,
  },
  details: ["JSON: { items: Message[], nextCursor }."],
  async run({ args, out, open, now }) {
    args.expectPositionals(0);
    const status = args.string("status");
    if (status !== undefined && !STATUSES.includes(status as MessageStatus)) {
      throw usageError(`--status must be one of ${STATUSES.join(", ")}; got ${JSON.stringify(status)}.`);
    }
    const page = await (await open()).postel.outbound.messages.list(
      compact({
        limit: pageLimit(args),
        status: status as MessageStatus | undefined,
        type: args.string("type"),
        tenantId: args.string("tenant"),
        since: args.time("since", now()),
        until: args.time("until", now()),
        cursor: args.string("cursor"),
      }),
    );
    if (out.json) return out.data(page);
    if (page.items.length === 0) return out.note("No messages.");
    out.table(
      [
        { header: "ID", cell: (m: Message) => m.id },
        { header: "TYPE", cell: (m) => m.type, shrink: true },
        { header: "STATUS", cell: (m) => m.status },
        { header: "TENANT", cell: (m) => m.tenantId },
        { header: "CREATED", cell: (m) => formatTime(m.createdAt) },
        { header: "FINISHED", cell: (m) => formatTime(m.finishedAt) },
      ],
      page.items,
    );
    nextPageHint(out, page.nextCursor);
  },
};

const show: Command = {
  name: "messages show",
  summary: "One message: its payload, its deliveries and every attempt (the audit trail)",
  operands: ["<id>"],
  options: {},
  details: [
    "JSON: { message, deliveries, attempts }; attempts carry status, latency, error and response snippet.",
  ],
  async run({ args, out, open }) {
    const id = args.positional(0, "the message id");
    args.expectPositionals(1);
    const { messages } = (await open()).postel.outbound;
    // deliveries() and attempts() throw MESSAGE_NOT_FOUND (exit 3) for an unknown id.
    const deliveries = await messages.deliveries(id);
    const attempts = await messages.attempts(id);
    const message = (await messages.get(id))!;
    if (out.json) return out.data({ message, deliveries, attempts });
    out.fields([
      ["id", message.id],
      ["type", message.type],
      ["status", message.status],
      ["tenant", message.tenantId],
      ["idempotency key", message.idempotencyKey],
      ["created", formatTime(message.createdAt)],
      ["expires", message.expiresAt === null ? null : formatTime(message.expiresAt)],
      ["fanned out", message.fannedOutAt === null ? "not yet" : formatTime(message.fannedOutAt)],
      ["finished", message.finishedAt === null ? null : formatTime(message.finishedAt)],
      ["data", JSON.stringify(message.data)],
    ]);
    out.heading(`Deliveries (${deliveries.length})`);
    if (deliveries.length === 0) out.text("none yet");
    out.table(
      [
        { header: "DELIVERY", cell: (d: DeliveryRecord) => d.id },
        { header: "ENDPOINT", cell: (d) => d.endpointId },
        { header: "STATUS", cell: (d) => d.status },
        { header: "ATTEMPTS", cell: (d) => d.attemptsMade },
        { header: "NEXT", cell: (d) => (d.status === "pending" ? formatTime(d.nextAttemptAt) : "") },
        { header: "WEBHOOK-ID", cell: (d) => d.webhookId },
        { header: "LAST ERROR", cell: (d) => d.lastError, shrink: true },
      ],
      deliveries,
    );
    out.heading(`Attempts (${attempts.length})`);
    if (attempts.length === 0) out.text("none yet");
    out.table(
      [
        { header: "#", cell: (a: AttemptRecord) => a.attemptNumber },
        { header: "STARTED", cell: (a) => formatTime(a.startedAt) },
        { header: "ENDPOINT", cell: (a) => a.endpointId },
        { header: "STATUS", cell: (a) => a.statusCode ?? a.errorCode },
        { header: "OUTCOME", cell: (a) => a.outcome },
        { header: "LATENCY", cell: (a) => `${a.latencyMs}ms` },
        { header: "ERROR", cell: (a) => a.error, shrink: true },
        { header: "RESPONSE", cell: (a) => a.responseSnippet, shrink: true },
      ],
      attempts,
    );
  },
};

/** `messages list` and `messages show`. */
export const messageCommands: Command[] = [list, show];
