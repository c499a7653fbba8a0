import { createSigner, github, publicKeyFromPrivate, stripe, type Verifier } from "@postel/signing";
import type { InboundRequest } from "@postel/signing/inbound";
import type { Arb, Fc } from "./bad-values.js";

/** The receiver's time in the gate properties; requests are signed 30 s before it. */
export const GATE_NOW = Date.UTC(2026, 0, 1);
const SECONDS = GATE_NOW / 1000 - 30;

const key = (fill: number) => Buffer.alloc(32, fill).toString("base64");
const HMAC_SECRET = `whsec_${key(1)}`;
const ED25519_KEY = `whsk_${key(2)}`;
const PROVIDER_SECRET = "provider-secret-0123456789abcdef";

/** A source of the gate under test: its verifier and how a sender signs for it. */
export interface SignedSource {
  verify: string | Verifier;
  sign(body: Buffer, id: string): InboundRequest & { headers: Record<string, string> };
  /** The headers whose every byte the signature covers (or that carry the signature). */
  signed: readonly string[];
}

/** Standard Webhooks with an HMAC secret and with an Ed25519 key, Stripe, and GitHub. */
export const SIGNED_SOURCES: Record<string, SignedSource> = {
  hmac: standardWebhooks(HMAC_SECRET, HMAC_SECRET),
  ed25519: standardWebhooks(ED25519_KEY, publicKeyFromPrivate(ED25519_KEY)),
  stripe: {
    verify: stripe({ secret: PROVIDER_SECRET }),
    sign: (body) => ({ body, headers: stripe.sign({ secret: PROVIDER_SECRET, timestamp: SECONDS, body }) }),
    signed: ["stripe-signature"],
  },
  github: {
    verify: github({ secret: PROVIDER_SECRET }),
    sign: (body, id) => ({
      body,
      headers: { ...github.sign({ secret: PROVIDER_SECRET, body }), "x-github-delivery": id },
    }),
    signed: ["x-hub-signature-256"],
  },
};

function standardWebhooks(secret: string, verify: string): SignedSource {
  const signer = createSigner(secret);
  return {
    verify,
    sign: (body, id) => ({ body, headers: { ...signer.sign(id, SECONDS, body) } }),
    signed: ["webhook-id", "webhook-timestamp", "webhook-signature"],
  };
}

/** One change to the signed content of a request: a body byte, or a byte of a signed header. */
export type Tamper =
  | { target: "body"; op: "flip"; at: number; bit: number }
  | { target: "body"; op: "insert" | "delete"; at: number; byte: number }
  | { target: "header"; op: "replace" | "insert" | "delete"; header: number; at: number; char: string }
  | { target: "header"; op: "remove"; header: number };

// No whitespace or list separators: inserting those at an edge may leave a signature list intact.
const CHARS = "ABCDEFabcdef0123456789+/=._-";

/** Changes that each alter what the signature covers. */
export function tamper(fc: Fc): Arb<Tamper> {
  const at = fc.nat();
  const header = fc.nat();
  const char = fc.constantFrom(...CHARS);
  const body = fc.oneof(
    fc.record({ target: fc.constant("body"), op: fc.constant("flip"), at, bit: fc.nat(7) }),
    fc.record({
      target: fc.constant("body"),
      op: fc.constantFrom("insert", "delete"),
      at,
      byte: fc.nat(255),
    }),
  );
  const edit = fc.record({
    target: fc.constant("header"),
    op: fc.constantFrom("replace", "insert", "delete"),
    header,
    at,
    char,
  });
  const remove = fc.record({ target: fc.constant("header"), op: fc.constant("remove"), header });
  return fc.oneof(
    { arbitrary: body, weight: 4 },
    { arbitrary: edit, weight: 4 },
    { arbitrary: remove, weight: 1 },
  ) as Arb<Tamper>;
}

/** Applies a tamper to a copy of `request`; the result always differs from it where it is signed. */
export function applyTamper(
  request: InboundRequest & { headers: Record<string, string> },
  signed: readonly string[],
  t: Tamper,
): InboundRequest & { headers: Record<string, string> } {
  const body = Buffer.from(request.body);
  const headers = { ...request.headers };
  if (t.target === "body") {
    const i = t.at % (body.length + (t.op === "insert" ? 1 : 0) || 1);
    if (t.op === "flip") body[i]! ^= 1 << t.bit;
    if (t.op === "flip") return { ...request, body, headers };
    const inserted = t.op === "insert" ? Buffer.from([t.byte]) : Buffer.alloc(0);
    const rest = body.subarray(i + (t.op === "delete" ? 1 : 0));
    return { ...request, body: Buffer.concat([body.subarray(0, i), inserted, rest]), headers };
  }
  const name = signed[t.header % signed.length]!;
  const value = headers[name] ?? "";
  if (t.op === "remove") {
    delete headers[name];
    return { ...request, body, headers };
  }
  const i = t.at % (value.length + (t.op === "insert" ? 1 : 0) || 1);
  const replacement = t.op === "replace" && value[i] === t.char ? (t.char === "A" ? "B" : "A") : t.char;
  const removed = t.op === "insert" ? 0 : 1;
  headers[name] = value.slice(0, i) + (t.op === "delete" ? "" : replacement) + value.slice(i + removed);
  return { ...request, body, headers };
}
