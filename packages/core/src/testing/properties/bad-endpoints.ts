import { ENDPOINT_LIMITS } from "../../outbound/endpoint-input.js";
import { badPolicyFields, REGISTERED_NAME } from "./bad-policy-fields.js";
import { notHttpUrls, privateUrls, urlsWithCredentials } from "./bad-urls.js";
import {
  type Arb,
  type BadInput,
  badFields,
  type Fc,
  field,
  filled,
  labelled,
  word,
  lengthPast,
  unserializable,
  unstorableText,
  wrongType,
} from "./bad-values.js";

const INVALID = ["INVALID_ENDPOINT"];

const validGlob = (fc: Fc) => fc.stringMatching(/^[a-z]{1,6}\.(\*|[a-z]{1,6})$/);

function url(fc: Fc, required: boolean): Arb<BadInput & { field: string }> {
  const withCode = (code: string) => (bad: { what: string; value: string }) => ({ ...bad, codes: [code] });
  const cases = fc.oneof(
    labelled("wrong type", wrongType(fc, required ? ["string"] : ["string", "undefined"])),
    labelled("empty", fc.constant("")),
    labelled(
      `over ${ENDPOINT_LIMITS.urlLength} characters`,
      lengthPast(fc, ENDPOINT_LIMITS.urlLength).map((n) => `https://hooks.example.com/${filled("a", n)}`),
    ),
    labelled("NUL or lone surrogate", unstorableText(fc, fc.constant("https://hooks.example.com/x"))),
    {
      arbitrary: labelled("not an absolute http(s) URL", notHttpUrls(fc)).map(withCode("INVALID_URL")),
      weight: 2,
    },
    labelled("credentials in the URL", urlsWithCredentials(fc)).map(withCode("INVALID_URL")),
    {
      arbitrary: labelled("a private address", privateUrls(fc)).map(withCode("PRIVATE_ADDRESS_NOT_ALLOWED")),
      weight: 4,
    },
  );
  return field(fc, "url", [cases], INVALID);
}

function text(fc: Fc, name: string, limit: number, nullable: boolean): Arb<BadInput & { field: string }> {
  return field(
    fc,
    name,
    [
      labelled(
        "wrong type",
        wrongType(fc, nullable ? ["string", "null", "undefined"] : ["string", "undefined"]),
      ),
      labelled(
        `over ${limit} characters`,
        lengthPast(fc, limit).map((n) => filled("d", n)),
      ),
      labelled("NUL or lone surrogate", unstorableText(fc)),
    ],
    INVALID,
  );
}

function types(fc: Fc): Arb<BadInput & { field: string }> {
  const badGlob = fc.oneof(
    wrongType(fc, ["string"]),
    fc.constantFrom("", " ", "order created", ".order", "order.", "ordér.*", "a\u0000", "a\ud800", "*\n"),
    lengthPast(fc, 255).map((n) => filled("t", n)),
  );
  return field(
    fc,
    "types",
    [
      labelled("wrong type", wrongType(fc, ["array", "undefined"])),
      labelled("empty", fc.constant([])),
      labelled(
        `over ${ENDPOINT_LIMITS.types} globs`,
        fc
          .integer({ min: ENDPOINT_LIMITS.types + 1, max: ENDPOINT_LIMITS.types * 3 })
          .map((n) => Array.from({ length: n }, (_, i) => `order.t${i}`)),
      ),
      labelled(
        "an invalid glob among valid ones",
        fc
          .tuple(fc.array(validGlob(fc), { maxLength: 4 }), badGlob, fc.nat())
          .map(([globs, bad, at]) => globs.toSpliced(at % (globs.length + 1), 0, bad as string)),
      ),
    ],
    INVALID,
  );
}

/** A JSON object past `bytes` when serialised: one long string, or many keys. */
function jsonPast(fc: Fc, bytes: number): Arb<Record<string, unknown>> {
  return fc.oneof(
    lengthPast(fc, bytes).map((n) => ({ "data.blob": filled("m", n) })),
    fc
      .integer({ min: Math.ceil(bytes / 12), max: Math.ceil(bytes / 4) })
      .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`data.k${i}`, i]))),
  );
}

function jsonObject(fc: Fc, name: string, bytes: number, extra: Arb<{ what: string; value: unknown }>[]) {
  const nullable = name === "filter";
  return field(
    fc,
    name,
    [
      labelled(
        "wrong type",
        wrongType(fc, nullable ? ["object", "null", "undefined"] : ["object", "undefined"]),
      ),
      unserializable(fc),
      labelled(`over ${bytes / 1024} KiB of JSON`, jsonPast(fc, bytes)),
      labelled(
        "NUL or lone surrogate in a key or value",
        fc
          .tuple(unstorableText(fc), fc.boolean())
          .map(([bad, inKey]) => (inKey ? { [`data.${bad}`]: 1 } : { "data.note": bad })),
      ),
      ...extra,
    ],
    INVALID,
  );
}

function filter(fc: Fc): Arb<BadInput & { field: string }> {
  const deep = (depth: number) => {
    let node: Record<string, unknown> = { type: "a" };
    for (let i = 0; i < depth; i++) node = { $not: node };
    return node;
  };
  return jsonObject(fc, "filter", ENDPOINT_LIMITS.filterBytes, [
    labelled(
      "an unknown operator or path",
      fc.constantFrom(
        { "data.amount": { $bogus: 1 } },
        { $nor: [{ type: "a" }] },
        { "": 1 },
        { "data..x": 1 },
        { other: 1 },
        { "data.amount": { $gt: "10" } },
        { $and: [] },
        { $or: "x" },
        { "data.tags": { $in: "x" } },
      ),
    ),
    labelled("nested deeper than 32 levels", fc.integer({ min: 33, max: 200 }).map(deep)),
  ]);
}

function registeredName(fc: Fc, name: string): Arb<BadInput & { field: string }> {
  return field(
    fc,
    name,
    [
      labelled("wrong type", wrongType(fc, ["string", "null", "undefined"])),
      labelled(
        "not registered",
        word(fc).filter((w) => w !== REGISTERED_NAME),
      ),
      labelled(
        "over 255 characters",
        lengthPast(fc, ENDPOINT_LIMITS.nameLength).map((n) => filled("f", n)),
      ),
    ],
    INVALID,
  );
}

function headers(fc: Fc): Arb<BadInput & { field: string }> {
  const badName = fc.constantFrom(
    "bad header",
    "x:y",
    "",
    "ä-header",
    "x\u0000",
    "x\ud800",
    "webhook-id",
    "Webhook-Signature",
    "WEBHOOK-TIMESTAMP",
    "content-type",
    "Content-Length",
    "host",
    "Transfer-Encoding",
    "connection",
  );
  const badValue = fc.oneof(
    wrongType(fc, ["string"]),
    fc.constantFrom("a\r\nx-injected: 1", "a\nb", "a\rb", "a\u0000b", "a\ud800b"),
    lengthPast(fc, ENDPOINT_LIMITS.headerValueLength).map((n) => filled("v", n)),
  );
  return field(
    fc,
    "headers",
    [
      labelled("wrong type", wrongType(fc, ["object", "undefined"])),
      labelled(
        "a bad or reserved name",
        badName.map((name) => ({ [name]: "1" })),
      ),
      labelled(
        "a bad value",
        badValue.map((value) => ({ "x-ok": "1", "x-bad": value })),
      ),
      labelled(
        `over ${ENDPOINT_LIMITS.headers} headers`,
        fc
          .integer({ min: ENDPOINT_LIMITS.headers + 1, max: ENDPOINT_LIMITS.headers * 3 })
          .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, "1"]))),
      ),
    ],
    INVALID,
  );
}

function fields(fc: Fc, mode: "create" | "update") {
  const others = [
    text(fc, "description", ENDPOINT_LIMITS.descriptionLength, true),
    types(fc),
    filter(fc),
    registeredName(fc, "filterFn"),
    registeredName(fc, "transform"),
    headers(fc),
    ...badPolicyFields(fc),
    text(fc, "tenantId", 255, true),
    jsonObject(fc, "metadata", ENDPOINT_LIMITS.metadataBytes, []),
    field(
      fc,
      "unknown",
      [
        labelled(
          "a field that is not an option",
          fc.constantFrom("state", "id", "secrets", "createdAt", "urls"),
        ),
      ],
      INVALID,
    ).map((bad) => ({ ...bad, field: bad.value as string, value: "x" })),
  ];
  // The URL carries the SSRF checks: a fifth of the bad fields.
  return fc.oneof(
    { arbitrary: url(fc, mode === "create"), weight: Math.ceil(others.length / 4) },
    ...others.map((arbitrary) => ({ arbitrary, weight: 1 })),
  );
}

/** A valid input the bad fields are mixed into (the URL is never looked up: a bad field fails first). */
const VALID_INPUT = { url: "https://hooks.example.com/postel", types: ["order.*"], description: "valid" };

/**
 * Inputs `endpoints.create` (or `update`) must refuse: one to three bad fields mixed into a valid
 * input, or a value that is not an input object at all. Each carries the codes it may get.
 */
export function badEndpointInputs(fc: Fc, mode: "create" | "update"): Arb<BadInput> {
  const notAnObject = labelled(
    "not an input object",
    wrongType(fc, mode === "create" ? ["object"] : ["object", "null", "undefined"]),
  ).map((bad): BadInput => ({ ...bad, codes: INVALID }));
  const base = mode === "create" ? VALID_INPUT : { description: "valid" };
  return fc.oneof(
    { arbitrary: badFields(fc, base, fields(fc, mode)), weight: 9 },
    { arbitrary: notAnObject, weight: 1 },
  );
}
