import type * as FastCheck from "fast-check";

/** The fast-check module, loaded lazily so `@postel/core/testing` works without it installed. */
export type Fc = typeof FastCheck;
/** A fast-check arbitrary. */
export type Arb<T> = FastCheck.Arbitrary<T>;

/** One generated bad input: what is wrong with it, the value, and the codes it may be refused with. */
export interface BadInput<T = unknown> {
  what: string;
  value: T;
  codes: readonly string[];
}

/** Loads fast-check, or explains that the property suites need it. */
export async function loadFastCheck(): Promise<Fc> {
  try {
    return await import("fast-check");
  } catch (cause) {
    throw new Error(
      "The Postel property suites need fast-check: add it as a devDependency (pnpm add -D fast-check).",
      { cause },
    );
  }
}

/** JavaScript value kinds, for generating a value of the wrong type. */
export type Kind =
  | "string"
  | "number"
  | "boolean"
  | "null"
  | "undefined"
  | "array"
  | "object"
  | "bigint"
  | "symbol"
  | "function";

/** A value of any kind but the `allowed` ones (NaN and infinities count as numbers). */
export function wrongType(fc: Fc, allowed: readonly Kind[]): Arb<unknown> {
  const all: Record<Kind, Arb<unknown>> = {
    string: fc.string({ maxLength: 8 }),
    number: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0)),
    boolean: fc.boolean(),
    null: fc.constant(null),
    undefined: fc.constant(undefined),
    array: fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 4 })), { maxLength: 3 }),
    object: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { maxKeys: 3 }),
      fc.constantFrom(new Date(0), new Map([["a", 1]]), /x/),
    ),
    bigint: fc.bigInt(),
    symbol: fc.string({ maxLength: 4 }).map((s) => Symbol(s)),
    function: fc.constant(() => 1),
  };
  const kinds = (Object.keys(all) as Kind[]).filter((kind) => !allowed.includes(kind));
  return fc.oneof(...kinds.map((kind) => all[kind]));
}

const insertAt = (text: string, at: number, piece: string) =>
  text.slice(0, at % (text.length + 1)) + piece + text.slice(at % (text.length + 1));

/** `base` (ASCII) with a NUL character somewhere. */
export function withNul(fc: Fc, base: Arb<string>): Arb<string> {
  return fc.tuple(base, fc.nat()).map(([text, at]) => insertAt(text, at, "\u0000"));
}

/**
 * `base` (ASCII, so no pair can form) with a lone surrogate somewhere: a high or a low half alone,
 * or both halves in the wrong order.
 */
export function withLoneSurrogate(fc: Fc, base: Arb<string>): Arb<string> {
  const lone = fc.oneof(
    fc.integer({ min: 0xd800, max: 0xdbff }).map((unit) => String.fromCharCode(unit)),
    fc.integer({ min: 0xdc00, max: 0xdfff }).map((unit) => String.fromCharCode(unit)),
    fc.constant("\udc00\ud800"),
  );
  return fc.tuple(base, fc.nat(), lone).map(([text, at, piece]) => insertAt(text, at, piece));
}

/** Text that cannot be stored as given: with a NUL or a lone surrogate. */
export function unstorableText(fc: Fc, base: Arb<string> = fc.string({ maxLength: 12 })): Arb<string> {
  return fc.oneof(withNul(fc, base), withLoneSurrogate(fc, base));
}

/** A length past `limit`: mostly a little past it, sometimes far past it (up to 1 MiB). */
export function lengthPast(fc: Fc, limit: number): Arb<number> {
  return fc.oneof(
    { arbitrary: fc.integer({ min: limit + 1, max: limit + 16 }), weight: 4 },
    { arbitrary: fc.integer({ min: limit + 1, max: limit * 4 }), weight: 4 },
    { arbitrary: fc.constant(Math.max(limit + 1, 1 << 20)), weight: 1 },
  );
}

/** A string of `length` characters made of `pattern`, repeated. */
export function filled(pattern: string, length: number): string {
  return pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);
}

/** A value `JSON.stringify` throws on: a BigInt, a cycle, a throwing `toJSON` or getter. */
export function unserializable(fc: Fc): Arb<{ what: string; value: unknown }> {
  const cycle = () => {
    const node: Record<string, unknown> = { id: 1 };
    node["self"] = { parent: node };
    return node;
  };
  return fc.oneof(
    fc.bigInt().map((value) => ({ what: "a BigInt", value: { amount: value } })),
    fc.constant(null).map(() => ({ what: "a cycle", value: cycle() })),
    fc.constant({
      what: "a throwing toJSON",
      value: {
        toJSON: () => {
          throw new RangeError("toJSON failed");
        },
      },
    }),
    fc.constant({
      what: "a throwing getter",
      value: Object.defineProperty({}, "amount", {
        enumerable: true,
        get: () => {
          throw new Error("getter failed");
        },
      }),
    }),
  );
}

/** Picks 1 to `max` distinct bad fields (by name) and merges them into one object over `base`. */
export function badFields(
  fc: Fc,
  base: Record<string, unknown>,
  fields: Arb<BadInput & { field: string }>,
  max = 3,
): Arb<BadInput<Record<string, unknown>>> {
  // Mostly one bad field, so each gets its own code; sometimes several, to see the first one win.
  const some = fc.oneof(
    { arbitrary: fields.map((bad) => [bad]), weight: 3 },
    {
      arbitrary: fc.uniqueArray(fields, { selector: (bad) => bad.field, minLength: 2, maxLength: max }),
      weight: 1,
    },
  );
  return some.map((bads) => ({
    what: bads.map((bad) => `${bad.field}: ${bad.what}`).join("; "),
    value: Object.assign({ ...base }, ...bads.map((bad) => ({ [bad.field]: bad.value }))),
    codes: [...new Set(bads.flatMap((bad) => bad.codes))],
  }));
}

/** Names the bad input `field`: shorthand for building a field's bad-value arbitrary. */
export function field(
  fc: Fc,
  name: string,
  cases: Arb<{ what: string; value: unknown; codes?: readonly string[] }>[],
  codes: readonly string[],
): Arb<BadInput & { field: string }> {
  return fc
    .oneof(...cases)
    .map((bad) => ({ field: name, what: bad.what, value: bad.value, codes: bad.codes ?? codes }));
}

/** A short lower-case word. */
export const word = (fc: Fc): Arb<string> => fc.stringMatching(/^[a-z]{1,8}$/);

/** Labels every generated value with `what`. */
export function labelled<T>(what: string, arb: Arb<T>): Arb<{ what: string; value: T }> {
  return arb.map((value) => ({ what, value }));
}
