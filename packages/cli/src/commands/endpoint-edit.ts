import type { UpdateEndpointInput } from "@postel/core";
import type { Args } from "../args.js";
import type { Command } from "../command.js";
import { compact } from "../compact.js";
import { usageError } from "../exit-codes.js";
import { auditUrl } from "../record-action.js";
import {
  endpointNotFound,
  headerFlags,
  keyFailureFlag,
  ON_KEY_FAILURE_OPTION,
  printEndpoint,
  typesFlag,
  withHiddenHeaders,
} from "./endpoints.js";

const update: Command = {
  name: "endpoints update",
  summary: "Change an endpoint's URL, description, types, headers, limits or key policy (the rest stays)",
  operands: ["<id>"],
  options: {
    url: { type: "string", value: "<url>", description: "where webhooks are POSTed from now on" },
    description: { type: "string", value: "<text>", description: 'a note for people ("" removes it)' },
    types: {
      type: "string",
      multiple: true,
      value: "<glob>",
      description: "event types to receive, replacing the list (repeat, or comma-separate)",
    },
    header: {
      type: "string",
      multiple: true,
      value: "<name=value>",
      description: "add or replace an extra request header (repeat)",
    },
    "remove-header": {
      type: "string",
      multiple: true,
      value: "<name>",
      description: "stop sending this extra header (repeat)",
    },
    "rate-limit": {
      type: "string",
      value: "<n|default>",
      description: 'at most this many requests per second, by every instance together ("0.5" allowed)',
    },
    "max-in-flight": {
      type: "string",
      value: "<n|default>",
      description: "at most this many requests in flight at once, by every instance together",
    },
    "on-key-failure": ON_KEY_FAILURE_OPTION,
    "allow-private-networks": {
      type: "boolean",
      description: "accept a --url on a private or loopback address (refused by default)",
    },
  },
  details: [
    "Only what is given changes. `default` gives a limit back to the app's configuration.",
    "Prints the endpoint as it is now (header values as ***). JSON: the endpoint.",
    "Recorded in the audit log as endpoint.update (the fields changed and a new URL; no header value).",
    "Example: postel endpoints update ep_01J… --url https://hooks.example.com/v2 --rate-limit 20",
  ],
  audited: true,
  async run({ args, out, open, record }) {
    const id = args.positional(0, "the endpoint id");
    args.expectPositionals(1);
    const db = await open({ allowPrivateNetworks: args.flag("allow-private-networks") });
    const current = await db.postel.outbound.endpoints.get(id);
    if (current === null) throw endpointNotFound(id);
    const description = args.string("description");
    const types = typesFlag(args);
    const input: UpdateEndpointInput = compact({
      url: args.string("url"),
      description: description === undefined ? undefined : description === "" ? null : description,
      types: types.length > 0 ? types : undefined,
      headers: changedHeaders(args, current.headers),
      rateLimit: limit(args, "rate-limit"),
      maxInFlight: limit(args, "max-in-flight"),
      onKeyFailure: keyFailureFlag(args),
    });
    if (Object.keys(input).length === 0) {
      throw usageError(
        "Say what to change: --url, --description, --types, --header, --remove-header, --rate-limit, --max-in-flight or --on-key-failure.",
      );
    }
    const endpoint = await db.postel.outbound.endpoints.update(id, input);
    await record({
      action: "endpoint.update",
      target: id,
      detail: { fields: Object.keys(input).join(","), url: input.url && auditUrl(input.url) },
    });
    if (out.json) return out.data(withHiddenHeaders(endpoint));
    printEndpoint(out, endpoint);
  },
};

const remove: Command = {
  name: "endpoints delete",
  summary: "Delete an endpoint: its pending and held deliveries are cancelled, its history stays",
  operands: ["<id>"],
  options: { yes: { type: "boolean", description: "confirm without being asked" } },
  details: [
    "Asks first on a terminal; elsewhere (a script, a pipe) it needs --yes.",
    "JSON: { deleted: true, endpoint } (header values as ***).",
    "Recorded in the audit log as endpoint.delete (with its URL).",
  ],
  audited: true,
  async run({ args, out, open, confirm, record }) {
    const id = args.positional(0, "the endpoint id");
    args.expectPositionals(1);
    const db = await open();
    const endpoint = await db.postel.outbound.endpoints.get(id);
    if (endpoint === null) throw endpointNotFound(id);
    if (!args.flag("yes")) {
      const yes = await confirm(`Delete endpoint ${id} (${endpoint.url}) and cancel its pending deliveries?`);
      if (yes === null) {
        throw usageError(
          `endpoints delete removes ${id} for good and cancels its pending deliveries; add --yes to confirm.`,
        );
      }
      if (!yes) return out.note(`Not deleted: ${id} is as it was.`);
    }
    await db.postel.outbound.endpoints.delete(id);
    await record({ action: "endpoint.delete", target: id, detail: { url: auditUrl(endpoint.url) } });
    if (out.json) return out.data({ deleted: true, endpoint: withHiddenHeaders(endpoint) });
    printEndpoint(out, endpoint);
    out.text(`Deleted ${id}: its pending and held deliveries are cancelled; its history stays.`);
  },
};

// The endpoint's headers with --remove-header and --header applied (names match in any case, as in
// HTTP), or undefined when neither is given.
function changedHeaders(args: Args, current: Record<string, string>): Record<string, string> | undefined {
  const removed = args.strings("remove-header");
  const added = headerFlags(args);
  if (removed.length === 0 && Object.keys(added).length === 0) return undefined;
  const headers = { ...current };
  const drop = (name: string) => {
    const found = Object.keys(headers).filter((key) => key.toLowerCase() === name.toLowerCase());
    for (const key of found) delete headers[key];
    return found.length > 0;
  };
  for (const name of removed) {
    if (!drop(name)) {
      const names = Object.keys(current);
      throw usageError(
        `--remove-header ${JSON.stringify(name)}: the endpoint sends no such header (${names.length > 0 ? `it has ${names.join(", ")}` : "it has none"}).`,
      );
    }
  }
  for (const [name, value] of Object.entries(added)) {
    drop(name);
    headers[name] = value;
  }
  return headers;
}

// A limit flag: a number, `default` (null: the app's own setting), or undefined when not given.
function limit(args: Args, name: string): number | null | undefined {
  const value = args.string(name);
  if (value === undefined) return undefined;
  if (value === "default") return null;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) {
    throw usageError(`--${name} must be a number or "default"; got ${JSON.stringify(value)}.`);
  }
  return n;
}

/** `endpoints update` and `endpoints delete`. */
export const endpointEditCommands: Command[] = [update, remove];
