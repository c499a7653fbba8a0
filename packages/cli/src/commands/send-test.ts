import type { Command } from "../command.js";
import { usageError } from "../exit-codes.js";
import { catalogOption } from "./catalog.js";

const sendTest: Command = {
  name: "endpoints send-test",
  summary: "Sends one test event to this endpoint only, through the workers",
  operands: ["<id>"],
  options: {
    type: { type: "string", value: "<type>", description: "the event type (required)" },
    data: {
      type: "string",
      value: "<json>",
      description: "the event's data (default: the catalog's example)",
    },
    catalog: {
      type: "string",
      value: "<module>",
      description:
        "your app's module exporting its defineEvents() catalog: checks the event, supplies the example",
    },
    "catalog-export": {
      type: "string",
      value: "<name>",
      description: "the module's export holding the catalog",
    },
  },
  details: [
    "The event is enqueued like any other and sent by your running workers: signed, retried and recorded,",
    "its message marked with testEndpointId. The endpoint gets it whatever its types; no other endpoint does.",
    "Prints the message id; follow it with `postel messages show <id>`. Recorded in the audit log as",
    "endpoint.test (the type and the message id).",
    "Example: postel endpoints send-test ep_01J… --type order.created --catalog dist/events.js",
  ],
  audited: true,
  async run({ args, out, open, record }) {
    args.expectPositionals(1);
    const id = args.positional(0, "endpoint id");
    const type = args.required("type");
    const text = args.string("data");
    let data: unknown;
    if (text !== undefined) {
      try {
        data = JSON.parse(text);
      } catch {
        throw usageError(`--data must be JSON, e.g. '{"id":"ord_1"}'`);
      }
    }
    const events = await catalogOption(args);
    const db = await open(events ? { events } : {});
    const result = await db.postel.outbound.endpoints.sendTest(id, {
      type,
      ...(data !== undefined ? { data } : {}),
    });
    await record({ action: "endpoint.test", target: id, detail: { type, messageId: result.id } });
    if (out.json) return out.data({ messageId: result.id, endpointId: id, type });
    out.text(result.id);
    out.note(`Queued a test ${type} for ${id}; follow it with: postel messages show ${result.id}`);
  },
};

/** `endpoints send-test`. */
export const sendTestCommands: Command[] = [sendTest];
