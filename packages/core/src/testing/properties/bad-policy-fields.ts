import { Custom } from "../../backoff.js";
import {
  type Arb,
  type BadInput,
  type Fc,
  field,
  labelled,
  word,
  unstorableText,
  wrongType,
} from "./bad-values.js";

/** Names the input properties register in `outbound.filters`, `.transforms` and `.retryPolicies`. */
export const REGISTERED_NAME = "registered";

const INVALID = ["INVALID_ENDPOINT"];
const BAD_DURATIONS = ["", "-5s", "5", "1e3s", "5 m", "forever", -1, Number.NaN, Number.POSITIVE_INFINITY];

function ratio(fc: Fc) {
  return fc.constantFrom(0, -0.1, 1.01, 2, Number.NaN, Number.POSITIVE_INFINITY, "0.5", null);
}
function count(fc: Fc) {
  return fc.constantFrom(0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "20", null);
}

function settings(fc: Fc, name: string, keys: Record<string, Arb<unknown>>) {
  return field(
    fc,
    name,
    [
      labelled("wrong type", wrongType(fc, ["object", "null", "undefined"])),
      labelled(
        "an unknown option",
        word(fc).map((key) => ({ [`${key}X`]: 1 })),
      ),
      ...Object.entries(keys).map(([key, bad]) =>
        labelled(
          `a bad ${key}`,
          bad.map((value) => ({ [key]: value })),
        ),
      ),
    ],
    INVALID,
  );
}

function number(fc: Fc, name: string, bad: readonly unknown[]): Arb<BadInput & { field: string }> {
  return field(fc, name, [labelled("out of range or not a number", fc.constantFrom(...bad))], INVALID);
}

function secret(fc: Fc): Arb<BadInput & { field: string }> {
  const base64Of = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");
  return field(
    fc,
    "secret",
    [
      labelled("wrong type", wrongType(fc, ["string", "undefined"])),
      labelled(
        "shorter than 24 bytes",
        fc
          .tuple(fc.integer({ min: 1, max: 23 }), fc.boolean())
          .map(([bytes, prefixed]) => (prefixed ? "whsec_" : "") + base64Of(bytes)),
      ),
      labelled(
        "not a secret",
        fc.constantFrom(
          "",
          "abc",
          "whsec_",
          "whsec_QQ==",
          "whsec_!!!!",
          "whsk_abc",
          "whpk_abc",
          "whsec_ab cd",
        ),
      ),
      labelled(
        "a valid secret with whitespace",
        fc.constantFrom(` whsec_${base64Of(32)}`, `whsec_${base64Of(32)}\n`),
      ),
      labelled("NUL or lone surrogate", unstorableText(fc, fc.constant(`whsec_${base64Of(32)}`))),
    ],
    INVALID,
  );
}

/**
 * Bad values of an endpoint's delivery policy: retry policy, circuit breaker, auto-disable, limits
 * and signing secret (short, not base64, a public key, with whitespace, ...).
 */
export function badPolicyFields(fc: Fc): Arb<BadInput & { field: string }>[] {
  return [
    field(
      fc,
      "retryPolicy",
      [
        labelled("wrong type", wrongType(fc, ["string", "object", "null", "undefined"])),
        labelled(
          "not registered",
          word(fc).filter((w) => w !== REGISTERED_NAME),
        ),
        labelled(
          "an unregistered Custom policy",
          fc.constant(Custom({ maxAttempts: 2, compute: () => "1s" })),
        ),
        labelled("a plain object", fc.constant({ maxAttempts: 3, schedule: ["1s"] })),
      ],
      INVALID,
    ),
    settings(fc, "circuitBreaker", {
      threshold: ratio(fc),
      cooldown: fc.constantFrom(...BAD_DURATIONS),
      window: fc.constantFrom(...BAD_DURATIONS),
      minimumVolume: count(fc),
    }),
    settings(fc, "autoDisable", {
      failureRate: ratio(fc),
      window: fc.constantFrom(...BAD_DURATIONS),
      minAttempts: count(fc),
    }),
    number(fc, "maxInFlight", [0, -1, 1.5, 10_001, Number.NaN, Number.POSITIVE_INFINITY, "5", true, 2 ** 53]),
    number(fc, "rateLimit", [0, 0.001, -1, 100_001, Number.NaN, Number.POSITIVE_INFINITY, "5", false]),
    secret(fc),
  ];
}
