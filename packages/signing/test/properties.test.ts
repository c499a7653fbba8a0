import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import {
  createSigner,
  createVerifier,
  github,
  isPostelError,
  publicKeyFromPrivate,
  shopify,
  slack,
  stripe,
  twilio,
  type Verifier,
} from "../src/index.js";
import { apply, type Mutation, mutation, type PlainRequest, transportMutation } from "./mutations.js";

// Property: every generated mutation of a validly signed request that changes its signed content is
// refused with a coded error, every one that does not is never a crash, and transport-only changes
// (header-name case, order, extra headers, identical copies) are accepted. FC_SEED / FC_RUNS override.
const SEED = Number(process.env["FC_SEED"] || 14);
const RUNS = Number(process.env["FC_RUNS"] || 1000);

const NOW = Date.UTC(2026, 0, 1);
const SECONDS = NOW / 1000 - 30;
const key = (fill: number, bytes = 32) => Buffer.alloc(bytes, fill).toString("base64");
const HMAC_SECRET = `whsec_${key(1)}`;
const ED25519_KEY = `whsk_${key(2)}`;
const PROVIDER_SECRET = "provider-secret-0123456789abcdef";
const TWILIO_URL = "https://hooks.example.com/sms?site=1";

/** A signing scheme under test: how to sign, how to verify, and what its signature covers. */
interface Scheme {
  name: string;
  verifier: Verifier;
  sign(body: Buffer, id: string): PlainRequest;
  /** The content the signature covers as the scheme defines it; null when the request is ambiguous about it. */
  content(request: PlainRequest): string | null;
}

const AMBIGUOUS = Symbol("ambiguous");
/** A header's value read case-insensitively: undefined when absent, AMBIGUOUS when copies disagree. */
function one(request: PlainRequest, name: string): string | undefined | typeof AMBIGUOUS {
  const values = Object.entries(request.headers)
    .filter(([key]) => key.toLowerCase() === name)
    .flatMap(([, value]) => value);
  if (values.length === 0) return undefined;
  return values.every((value) => value === values[0]) ? values[0] : AMBIGUOUS;
}
const text = (value: string | undefined | typeof AMBIGUOUS) => (typeof value === "string" ? value : null);
const joined = (...parts: (string | null)[]) => (parts.includes(null) ? null : parts.join("\u0001"));
const bodyOf = (request: PlainRequest) => Buffer.from(request.body).toString("hex");

function standardWebhooks(name: string, secret: string, verifyWith: string): Scheme {
  const signer = createSigner(secret);
  return {
    name,
    verifier: createVerifier(verifyWith),
    sign: (body, id) => ({
      body,
      headers: { ...signer.sign(id, SECONDS, body), "content-type": "application/json" },
    }),
    content: (r) => joined(text(one(r, "webhook-id")), text(one(r, "webhook-timestamp")), bodyOf(r)),
  };
}

/** The timestamp Stripe signs with: the last `t=` element, as Stripe's own library reads the header. */
function stripeTimestamp(request: PlainRequest): string | null {
  const header = text(one(request, "stripe-signature"));
  const stamps = (header ?? "")
    .split(",")
    .filter((item) => item.includes("=") && item.slice(0, item.indexOf("=")).trim() === "t")
    .map((item) => item.slice(item.indexOf("=") + 1).trim());
  return stamps.at(-1) ?? null;
}

/**
 * What Twilio signs: the URL (compared as `new URL()` reads it, port and query encoding aside, as
 * twilio-node tries it) followed by the form parameters sorted by name, each name then value, with
 * no separator. So `a=+` and `a+` (`a ` with no value) sign the same string: that is the scheme's.
 */
function twilioContent(request: PlainRequest): string | null {
  if (request.url === undefined || !URL.canParse(request.url)) return null;
  const url = new URL(request.url);
  url.port = "";
  url.search = new URLSearchParams(url.search).toString();
  const type = text(one(request, "content-type"));
  if (type === null || type.toLowerCase().split(";")[0]!.trim() !== "application/x-www-form-urlencoded") {
    return url.href;
  }
  const params = new Map<string, Set<string>>();
  for (const [k, v] of new URLSearchParams(Buffer.from(request.body).toString("utf8"))) {
    params.set(k, (params.get(k) ?? new Set()).add(v));
  }
  const signed = [...params.keys()].sort().map((k) =>
    [...params.get(k)!]
      .sort()
      .map((v) => k + v)
      .join(""),
  );
  return url.href + signed.join("");
}

const SCHEMES: Scheme[] = [
  standardWebhooks("standard-webhooks v1 (HMAC)", HMAC_SECRET, HMAC_SECRET),
  standardWebhooks("standard-webhooks v1a (Ed25519)", ED25519_KEY, publicKeyFromPrivate(ED25519_KEY)),
  {
    name: "stripe",
    verifier: stripe({ secret: PROVIDER_SECRET }),
    sign: (body) => ({ body, headers: stripe.sign({ secret: PROVIDER_SECRET, timestamp: SECONDS, body }) }),
    content: (r) => joined(stripeTimestamp(r), bodyOf(r)),
  },
  {
    name: "github",
    verifier: github({ secret: PROVIDER_SECRET }),
    sign: (body, id) => ({
      body,
      headers: { ...github.sign({ secret: PROVIDER_SECRET, body }), "x-github-delivery": id },
    }),
    content: bodyOf,
  },
  {
    name: "shopify",
    verifier: shopify({ secret: PROVIDER_SECRET }),
    sign: (body, id) => ({
      body,
      headers: { ...shopify.sign({ secret: PROVIDER_SECRET, body }), "x-shopify-webhook-id": id },
    }),
    content: bodyOf,
  },
  {
    name: "slack",
    verifier: slack({ signingSecret: PROVIDER_SECRET }),
    sign: (body) => ({
      body,
      headers: slack.sign({ signingSecret: PROVIDER_SECRET, timestamp: SECONDS, body }),
    }),
    content: (r) => joined(text(one(r, "x-slack-request-timestamp")), bodyOf(r)),
  },
  {
    name: "twilio",
    verifier: twilio({ authToken: PROVIDER_SECRET }),
    sign: (body) => {
      const params: Record<string, string[]> = Object.create(null);
      for (const [k, v] of new URLSearchParams(body.toString("utf8"))) params[k] = [...(params[k] ?? []), v];
      const headers = {
        "content-type": "application/x-www-form-urlencoded",
        ...twilio.sign({ authToken: PROVIDER_SECRET, url: TWILIO_URL, params }),
      };
      return { body, headers, url: TWILIO_URL };
    },
    content: twilioContent,
  },
];

/** Bodies: JSON for most schemes, form-encoded for Twilio (the scheme signs parameters, not bytes). */
const body = (scheme: Scheme) =>
  scheme.name === "twilio"
    ? fc
        .dictionary(fc.stringMatching(/^[A-Za-z]{1,8}$/), fc.string({ maxLength: 12 }), {
          minKeys: 1,
          maxKeys: 5,
        })
        .map((params) => Buffer.from(new URLSearchParams(params).toString()))
    : fc.jsonValue({ maxDepth: 2 }).map((value) => Buffer.from(JSON.stringify({ data: value })));
const messageId = fc.stringMatching(/^msg_[A-Za-z0-9]{4,24}$/);

interface Figures {
  scheme: string;
  property: string;
  seed: number;
  numRuns: number;
  tried: number;
  refused: number;
  accepted: number;
  falseAccepts: number;
  uncoded: number;
  codes: Record<string, number>;
}
const figures: Figures[] = [];

function verdict(scheme: Scheme, request: PlainRequest): { ok: true } | { ok: false; error: unknown } {
  try {
    scheme.verifier.verify(request, NOW);
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

function count(f: Figures, error: unknown): void {
  if (!isPostelError(error)) {
    f.uncoded++;
    throw new Error(
      `an uncoded ${error instanceof Error ? error.constructor.name : typeof error}: ${String(error)}`,
    );
  }
  f.refused++;
  f.codes[error.code] = (f.codes[error.code] ?? 0) + 1;
}

function newFigures(scheme: Scheme, property: string, numRuns: number): Figures {
  return {
    scheme: scheme.name,
    property,
    seed: SEED,
    numRuns,
    tried: 0,
    refused: 0,
    accepted: 0,
    falseAccepts: 0,
    uncoded: 0,
    codes: {},
  };
}

/** Signs a generated body, checks the unmutated request passes, then judges 1 to 3 mutations of it. */
function mutationProperty(scheme: Scheme, f: Figures) {
  return fc.property(
    body(scheme),
    messageId,
    fc.array(mutation(), { minLength: 1, maxLength: 3 }),
    (raw, id, mutations: Mutation[]) => {
      const signed = scheme.sign(raw, id);
      const original = verdict(scheme, signed);
      if (!original.ok) throw new Error("refused the unmutated request", { cause: original.error });
      const mutated = mutations.reduce(apply, signed);
      const intact = scheme.content(mutated) !== null && scheme.content(mutated) === scheme.content(signed);
      const outcome = verdict(scheme, mutated);
      f.tried++;
      if (!outcome.ok) return count(f, outcome.error);
      if (!intact) {
        f.falseAccepts++;
        throw new Error("accepted a request whose signed content changed");
      }
      f.accepted++;
    },
  );
}

describe.each(SCHEMES)("signing properties: $name", (scheme) => {
  test("never accepts a mutation that changes the signed content, and never crashes on one", () => {
    const f = newFigures(scheme, "mutations", RUNS);
    figures.push(f);
    fc.assert(mutationProperty(scheme, f), { seed: SEED, numRuns: RUNS });
    // Most mutations must change the signed content, or the property would prove little.
    expect(f.refused).toBeGreaterThan(f.tried / 2);
  });

  test("accepts transport-only changes: header-name case, order, extra headers, identical copies", () => {
    const f = newFigures(scheme, "transport changes", Math.ceil(RUNS / 4));
    figures.push(f);
    fc.assert(
      fc.property(
        body(scheme),
        messageId,
        fc.array(transportMutation(), { minLength: 1, maxLength: 3 }),
        (raw, id, mutations) => {
          const outcome = verdict(scheme, mutations.reduce(apply, scheme.sign(raw, id)));
          f.tried++;
          if (!outcome.ok) {
            count(f, outcome.error);
            throw new Error("refused a request whose signed content is intact", { cause: outcome.error });
          }
          f.accepted++;
        },
      ),
      { seed: SEED, numRuns: f.numRuns },
    );
  });
});

test("the mutation property catches a verifier that ignores the body (control)", () => {
  const [hmac] = SCHEMES as [Scheme];
  const blind: Scheme = {
    ...hmac,
    verifier: {
      scheme: "blind",
      verify: () => ({ scheme: "blind", id: undefined, timestamp: undefined, keyIndex: 0 }),
    },
  };
  const details = fc.check(mutationProperty(blind, newFigures(blind, "control", 100)), {
    seed: SEED,
    numRuns: 100,
  });
  expect(details.failed).toBe(true);
  expect(String(details.errorInstance)).toMatch(/accepted a request whose signed content changed/);
});

afterAll(() => {
  for (const f of figures) {
    console.log(
      `[property] signing: ${f.scheme} › ${f.property}: ${f.tried} tried, ${f.refused} refused, ${f.accepted} accepted, ` +
        `${f.falseAccepts} false accepts, ${f.uncoded} uncoded errors (seed ${f.seed})`,
    );
  }
  const dir = join(process.cwd(), ".generated", "property-figures");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "signing.json"), `${JSON.stringify(figures, null, 2)}\n`);
});
