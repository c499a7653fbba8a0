import { type Endpoint, type EndpointState, type KeyFailurePolicy, NotFoundError } from "@postel/core";
import type { Args, OptionSpec } from "../args.js";
import { type Command, nextPageHint, PAGE_OPTIONS, pageLimit } from "../command.js";
import { compact } from "../compact.js";
import { usageError } from "../exit-codes.js";
import type { Output } from "../output.js";
import { auditUrl } from "../record-action.js";
import { formatDuration, formatTime, percent } from "../time.js";
import { printActivity, printHealth, printRecentAttempts } from "./endpoint-activity.js";

const STATES: readonly EndpointState[] = ["active", "circuit-open", "disabled"];
const KEY_FAILURE_POLICIES: readonly KeyFailurePolicy[] = ["skip", "hold"];

/** `--on-key-failure` of `endpoints create` and `update`. */
export const ON_KEY_FAILURE_OPTION: OptionSpec = {
  type: "string",
  value: "<skip|hold>",
  description:
    "when an ordering key's head fails for good: skip to its next message (default), or hold the key until replayed or skipped",
};

/** An endpoint as the CLI prints it: custom header values hidden (they often carry credentials). */
export function withHiddenHeaders(endpoint: Endpoint): Endpoint {
  const headers = Object.fromEntries(Object.keys(endpoint.headers).map((name) => [name, "***"]));
  return { ...endpoint, headers };
}

/** The key/value block of one endpoint. */
export function printEndpoint(out: Output, endpoint: Endpoint): void {
  const { retryPolicy, circuitBreaker, autoDisable } = endpoint;
  out.fields([
    ["id", endpoint.id],
    ["url", endpoint.url],
    ["description", endpoint.description],
    ["state", endpoint.state],
    ["circuit open until", endpoint.circuitOpenUntil === null ? null : formatTime(endpoint.circuitOpenUntil)],
    ["disabled because", endpoint.state === "disabled" ? endpoint.disabledReason : null],
    ["types", endpoint.types.join(", ")],
    ["tenant", endpoint.tenantId],
    [
      "headers",
      Object.keys(endpoint.headers)
        .map((name) => `${name}=***`)
        .join(", ") || null,
    ],
    ["max in flight", endpoint.maxInFlight ?? "default"],
    ["rate limit", endpoint.rateLimit === null ? "default" : `${endpoint.rateLimit}/s`],
    ["on key failure", endpoint.onKeyFailure],
    ["retry policy", retryPolicy === null ? "default" : describePolicy(retryPolicy)],
    [
      "circuit breaker",
      circuitBreaker === null
        ? "default"
        : `opens at ${percent(circuitBreaker.threshold)} failures over ${formatDuration(circuitBreaker.windowMs)} (min ${circuitBreaker.minimumVolume}), cooldown ${formatDuration(circuitBreaker.cooldownMs)}`,
    ],
    [
      "auto-disable",
      autoDisable === null
        ? "default"
        : `at ${percent(autoDisable.failureRate)} failures over ${formatDuration(autoDisable.windowMs)} (min ${autoDisable.minAttempts})`,
    ],
    ["created", formatTime(endpoint.createdAt)],
    ["updated", formatTime(endpoint.updatedAt)],
  ]);
}

/** `--on-key-failure`, checked (undefined when not given). */
export function keyFailureFlag(args: Args): KeyFailurePolicy | undefined {
  const value = args.string("on-key-failure");
  if (value === undefined) return undefined;
  if (!KEY_FAILURE_POLICIES.includes(value as KeyFailurePolicy)) {
    throw usageError(`--on-key-failure must be skip or hold; got ${JSON.stringify(value)}.`);
  }
  return value as KeyFailurePolicy;
}

/** `--types`, repeated or comma-separated, as one list (empty when not given). */
export function typesFlag(args: Args): string[] {
  return args.strings("types").flatMap((t) => t.split(",").map((part) => part.trim()));
}

/** `--header name=value`, repeated, as headers (empty when not given). */
export function headerFlags(args: Args): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const header of args.strings("header")) {
    const at = header.indexOf("=");
    if (at <= 0) throw usageError(`--header must be name=value; got ${JSON.stringify(header)}.`);
    headers[header.slice(0, at).trim()] = header.slice(at + 1);
  }
  return headers;
}

/** The error (exit 3) for an endpoint id that does not exist. */
export function endpointNotFound(id: string): NotFoundError {
  return new NotFoundError(
    "ENDPOINT_NOT_FOUND",
    `No endpoint with id ${JSON.stringify(id)}; list them with \`postel endpoints list\`.`,
  );
}

function describePolicy(policy: NonNullable<Endpoint["retryPolicy"]>): string {
  if (policy.kind === "named") return `named ${JSON.stringify(policy.name)}`;
  if (policy.kind === "linear")
    return `linear, step ${formatDuration(policy.stepMs)}, ${policy.maxAttempts} retries`;
  return `exponential ${policy.schedule.map(formatDuration).join(" ")}, ${policy.maxAttempts} retries`;
}

const list: Command = {
  name: "endpoints list",
  summary: "List endpoints, oldest first",
  options: {
    state: {
      type: "string",
      value: "<state>",
      description: "only endpoints in this state: active, circuit-open, disabled",
    },
    tenant: { type: "string", value: "<id>", description: "only this tenant's endpoints" },
    ...PAGE_OPTIONS,
  },
  details: ["JSON: { items: Endpoint[], nextCursor }. Secrets are never listed."],
  async run({ args, out, open }) {
    args.expectPositionals(0);
    const state = args.string("state");
    if (state !== undefined && !STATES.includes(state as EndpointState)) {
      throw usageError(`--state must be one of ${STATES.join(", ")}; got ${JSON.stringify(state)}.`);
    }
    const page = await (await open()).postel.outbound.endpoints.list(
      compact({
        limit: pageLimit(args),
        state: state as EndpointState | undefined,
        tenantId: args.string("tenant"),
        cursor: args.string("cursor"),
      }),
    );
    if (out.json) return out.data({ ...page, items: page.items.map(withHiddenHeaders) });
    if (page.items.length === 0) return out.note("No endpoints.");
    out.table(
      [
        { header: "ID", cell: (e: Endpoint) => e.id },
        { header: "STATE", cell: (e) => e.state },
        { header: "URL", cell: (e) => e.url, shrink: true },
        { header: "TYPES", cell: (e) => e.types.join(","), shrink: true },
        { header: "TENANT", cell: (e) => e.tenantId },
        { header: "DESCRIPTION", cell: (e) => e.description, shrink: true },
      ],
      page.items,
    );
    nextPageHint(out, page.nextCursor);
  },
};

const show: Command = {
  name: "endpoints show",
  summary: "One endpoint: its settings, why it fails (last status, error, response), its attempts",
  operands: ["<id>"],
  options: {
    window: { type: "string", value: "<duration>", description: 'health over this long (default "1h")' },
  },
  details: [
    "After the settings: what its receiver answered last (status, error, the start of the response),",
    "the last success and since when it fails (over the last 24h; 'around' a time known to 10s), the",
    "circuit's next probe, its health over --window, and its newest attempts.",
    "JSON: { endpoint, health, countCap, activity } (health: the endpoint's line of `postel stats`, each",
    "count stopped at countCap; activity: postel.outbound.endpoints.activity(id)).",
    "Custom header values are printed as ***. Read the signing secret with `postel endpoints secret <id>`.",
  ],
  async run({ args, out, open }) {
    const id = args.positional(0, "the endpoint id");
    args.expectPositionals(1);
    const windowMs = args.duration("window") ?? 3_600_000;
    const { endpoints, stats } = (await open()).postel.outbound;
    const endpoint = await endpoints.get(id);
    if (endpoint === null) throw endpointNotFound(id);
    const [snapshot, activity] = await Promise.all([
      stats({ window: windowMs, endpointId: id }),
      endpoints.activity(id),
    ]);
    const health = snapshot.endpoints[0] ?? null;
    if (out.json) {
      return out.data({
        endpoint: withHiddenHeaders(endpoint),
        health,
        countCap: snapshot.countCap,
        activity,
      });
    }
    printEndpoint(out, endpoint);
    printActivity(out, activity);
    if (health !== null) printHealth(out, snapshot, health);
    printRecentAttempts(out, activity);
  },
};

const create: Command = {
  name: "endpoints create",
  summary: "Create an endpoint (its secret is generated, and printed only with --show-secret)",
  options: {
    url: { type: "string", value: "<url>", description: "where webhooks are POSTed (required)" },
    types: {
      type: "string",
      multiple: true,
      value: "<glob>",
      description: 'event types to receive, e.g. "order.*" (repeat, or comma-separate; default "*")',
    },
    description: { type: "string", value: "<text>", description: "a note for people" },
    tenant: { type: "string", value: "<id>", description: "receive only this tenant's messages" },
    header: {
      type: "string",
      multiple: true,
      value: "<name=value>",
      description: "an extra request header (repeat)",
    },
    "allow-private-networks": {
      type: "boolean",
      description: "accept a URL on a private or loopback address (refused by default)",
    },
    "on-key-failure": ON_KEY_FAILURE_OPTION,
    "show-secret": { type: "boolean", description: "print the generated signing secret" },
  },
  details: [
    "JSON: the endpoint (with `secret` only when --show-secret is given).",
    "Recorded in the audit log as endpoint.create (its URL and types; never the secret).",
  ],
  audited: true,
  async run({ args, out, open, record }) {
    args.expectPositionals(0);
    const url = args.required("url");
    const types = typesFlag(args);
    const headers = headerFlags(args);
    const onKeyFailure = keyFailureFlag(args);
    const db = await open({ allowPrivateNetworks: args.flag("allow-private-networks") });
    const endpoint = await db.postel.outbound.endpoints.create(
      compact({
        url,
        types: types.length > 0 ? types : undefined,
        headers: Object.keys(headers).length > 0 ? headers : undefined,
        description: args.string("description"),
        tenantId: args.string("tenant"),
        onKeyFailure,
      }),
    );
    const secret = args.flag("show-secret")
      ? await db.postel.outbound.endpoints.secret(endpoint.id)
      : undefined;
    await record({
      action: "endpoint.create",
      target: endpoint.id,
      detail: {
        url: auditUrl(endpoint.url),
        types: endpoint.types.join(","),
        onKeyFailure,
        secretShown: secret !== undefined,
      },
    });
    if (out.json) return out.data({ ...withHiddenHeaders(endpoint), ...(secret ? { secret } : {}) });
    printEndpoint(out, endpoint);
    if (secret) out.fields([["secret", secret]]);
    else out.note(`The signing secret is hidden; read it with: postel endpoints secret ${endpoint.id}`);
  },
};

/** `endpoints list`, `show` and `create`. */
export const endpointCommands: Command[] = [list, show, create];
