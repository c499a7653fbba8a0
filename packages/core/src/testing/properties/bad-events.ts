import {
  type Arb,
  type BadInput,
  badFields,
  type Fc,
  field,
  filled,
  labelled,
  lengthPast,
  unserializable,
  unstorableText,
  word,
  wrongType,
} from "./bad-values.js";

/** The `outbound.maxPayloadBytes` the input properties run with, so oversize payloads stay cheap. */
export const PROPERTY_MAX_PAYLOAD_BYTES = 4096;

/** A valid event the bad fields are mixed into. */
const VALID_EVENT = { type: "order.created", data: { id: 1 } };

const KEY_CODES = ["INVALID_ARGUMENT"];

/** `idempotencyKey` / `tenantId`: non-empty well-formed text of at most 255 characters, or absent. */
function badKey(fc: Fc, name: string): Arb<BadInput & { field: string }> {
  return field(
    fc,
    name,
    [
      labelled("wrong type", wrongType(fc, ["string", "null", "undefined"])),
      labelled("empty", fc.constant("")),
      labelled(
        "over 255 characters",
        lengthPast(fc, 255).map((n) => filled("k", n)),
      ),
      labelled("NUL or lone surrogate", unstorableText(fc)),
    ],
    KEY_CODES,
  );
}

/**
 * Events `send()` must refuse, each with the codes it may be refused with: bad types, payloads that
 * do not serialise or are too large, bad durations, keys that cannot be stored, unknown fields,
 * and values that are not events at all.
 */
export function badEvents(fc: Fc): Arb<BadInput> {
  const type = field(
    fc,
    "type",
    [
      labelled("wrong type", wrongType(fc, ["string"])),
      labelled("empty", fc.constant("")),
      labelled(
        "over 255 characters",
        lengthPast(fc, 255).map((n) => filled("a", n)),
      ),
      labelled(
        "a character outside A-Z a-z 0-9 _ . : - /",
        fc
          .tuple(word(fc), fc.constantFrom(" ", "*", "\u0000", "é", "\ud800", "\n", "#"))
          .map(([w, bad]) => `${w}${bad}x`),
      ),
      labelled(
        "a leading or trailing dot",
        word(fc).chain((w) => fc.constantFrom(`.${w}`, `${w}.`)),
      ),
    ],
    ["INVALID_EVENT_TYPE"],
  );
  const data = field(
    fc,
    "data",
    [
      labelled(
        "undefined, a function or a symbol",
        fc.constantFrom(undefined, () => 1, Symbol("data")),
      ),
      unserializable(fc),
      labelled(
        "larger than maxPayloadBytes",
        lengthPast(fc, PROPERTY_MAX_PAYLOAD_BYTES).map((n) => ({ blob: filled("x", n) })),
      ),
    ],
    ["PAYLOAD_NOT_SERIALIZABLE", "PAYLOAD_TOO_LARGE"],
  );
  const ttl = field(
    fc,
    "ttl",
    [
      labelled("wrong type", wrongType(fc, ["string", "number", "undefined"])),
      labelled(
        "not a positive finite duration",
        fc.oneof(
          fc.constantFrom(0, -1, -0.5, 0.4, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60),
          fc.constantFrom(
            "",
            "0s",
            "0ms",
            "-5s",
            "5",
            "1e3s",
            " 5s",
            "5s ",
            "5 s",
            "5x",
            "5S",
            "0.1ms",
            "1.5.2s",
          ),
          fc.integer({ max: -1 }),
          fc.string({ maxLength: 6 }).filter((s) => !/^\d+(\.\d+)?(ms|s|m|h|d)$/.test(s)),
        ),
      ),
    ],
    ["INVALID_DURATION"],
  );
  const unknown = field(
    fc,
    "unknownField",
    [labelled("an unknown field", fc.constant(true))],
    ["INVALID_EVENT"],
  );
  const fields = fc.oneof(
    { arbitrary: type, weight: 3 },
    { arbitrary: data, weight: 3 },
    { arbitrary: ttl, weight: 3 },
    { arbitrary: badKey(fc, "idempotencyKey"), weight: 2 },
    { arbitrary: badKey(fc, "tenantId"), weight: 2 },
    { arbitrary: unknown, weight: 1 },
  );
  const notAnEvent = labelled("not an event object", wrongType(fc, ["object", "array"])).map(
    (bad): BadInput => ({ ...bad, codes: ["INVALID_EVENT"] }),
  );
  const withUnknown = fc.constantFrom("payload", "id", "Type", "__proto__x", "headers").map(
    (name): BadInput => ({
      what: `unknown field ${name}`,
      value: { ...VALID_EVENT, [name]: 1 },
      codes: ["INVALID_EVENT"],
    }),
  );
  return fc.oneof(
    { arbitrary: badFields(fc, VALID_EVENT, fields), weight: 18 },
    { arbitrary: notAnEvent, weight: 1 },
    { arbitrary: withUnknown, weight: 1 },
  );
}
