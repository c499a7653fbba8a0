import type { Command } from "../command.js";
import { formatDuration } from "../time.js";
import { endpointNotFound, printEndpoint, withHiddenHeaders } from "./endpoints.js";

const enable: Command = {
  name: "endpoints enable",
  summary: "Back to active (from disabled or circuit-open); its held deliveries resume",
  operands: ["<id>"],
  options: {},
  details: ["JSON: the endpoint. Recorded in the audit log as endpoint.enable (with the state it left)."],
  audited: true,
  async run({ args, out, open, record }) {
    const id = args.positional(0, "the endpoint id");
    args.expectPositionals(1);
    const { endpoints } = (await open()).postel.outbound;
    const before = await endpoints.get(id);
    if (before === null) throw endpointNotFound(id);
    const endpoint = await endpoints.enable(id);
    // From circuit-open this closes the circuit: the log says which, as the dashboard's does.
    await record({ action: "endpoint.enable", target: id, detail: { was: before.state } });
    if (out.json) return out.data(withHiddenHeaders(endpoint));
    printEndpoint(out, endpoint);
  },
};

const disable: Command = {
  name: "endpoints disable",
  summary: "Take an endpoint out of rotation: its deliveries are held, not lost, until enabled",
  operands: ["<id>"],
  options: {
    reason: {
      type: "string",
      value: "<text>",
      description: 'why, shown by `endpoints show` (default "manual")',
    },
  },
  details: ["JSON: the endpoint. Recorded in the audit log as endpoint.disable (with the reason)."],
  audited: true,
  async run({ args, out, open, record }) {
    const id = args.positional(0, "the endpoint id");
    args.expectPositionals(1);
    const reason = args.string("reason");
    const endpoint = await (await open()).postel.outbound.endpoints.disable(id, reason);
    await record({ action: "endpoint.disable", target: id, detail: { reason: endpoint.disabledReason } });
    if (out.json) return out.data(withHiddenHeaders(endpoint));
    printEndpoint(out, endpoint);
  },
};

const rotateSecret: Command = {
  name: "endpoints rotate-secret",
  summary: "Add a new signing secret; the old one keeps signing for --overlap",
  operands: ["<id>"],
  options: {
    overlap: {
      type: "string",
      value: "<duration>",
      description: 'how long the old secret keeps signing too (default "24h")',
    },
    "show-secret": { type: "boolean", description: "print the new secret" },
  },
  details: [
    "JSON: { endpointId, overlapMs } (and `secret` only with --show-secret).",
    "Recorded in the audit log as secret.rotate (the overlap, and whether it was shown; never the secret).",
  ],
  audited: true,
  async run({ args, out, open, record }) {
    const id = args.positional(0, "the endpoint id");
    args.expectPositionals(1);
    const overlapMs = args.duration("overlap") ?? 86_400_000;
    const secret = await (await open()).postel.outbound.endpoints.rotateSecret(id, { overlap: overlapMs });
    const shown = args.flag("show-secret");
    await record({ action: "secret.rotate", target: id, detail: { overlap: overlapMs, secretShown: shown } });
    if (out.json) return out.data({ endpointId: id, overlapMs, ...(shown ? { secret } : {}) });
    out.text(
      `Rotated the signing secret of ${id}; the old one keeps signing for ${formatDuration(overlapMs)}.`,
    );
    if (shown) out.text(secret);
    else out.note(`The new secret is hidden; read it with: postel endpoints secret ${id}`);
  },
};

const secret: Command = {
  name: "endpoints secret",
  summary: "Print an endpoint's current signing secret (the only command that does, unasked)",
  operands: ["<id>"],
  options: {},
  details: [
    "Prints the secret alone on one line. JSON: { endpointId, secret }.",
    "Recorded in the audit log as secret.reveal before it is printed, as the dashboard does.",
  ],
  audited: true,
  async run({ args, out, open, record }) {
    const id = args.positional(0, "the endpoint id");
    args.expectPositionals(1);
    const value = await (await open()).postel.outbound.endpoints.secret(id);
    // A reveal cannot be taken back: none is printed unrecorded.
    await record({ action: "secret.reveal", target: id });
    if (out.json) return out.data({ endpointId: id, secret: value });
    out.text(value);
  },
};

/** `endpoints enable`, `disable`, `rotate-secret` and `secret`. */
export const endpointStateCommands: Command[] = [enable, disable, rotateSecret, secret];
