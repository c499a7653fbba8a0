import fc from "fast-check";
import type { WebhookRequest } from "../src/index.js";

/** A request as the property tests hold it: a plain header record whose values may repeat. */
export interface PlainRequest extends WebhookRequest {
  headers: Record<string, string | string[]>;
}

/**
 * One change to a signed request, as data so a counterexample prints what was done. Positions and
 * header picks are reduced modulo the current request's sizes when applied.
 */
export type Mutation =
  | { kind: "body-flip-bit"; at: number; bit: number }
  | { kind: "body-insert"; at: number; byte: number }
  | { kind: "body-delete"; at: number }
  | { kind: "body-truncate"; keep: number }
  | { kind: "body-wrap"; before: string; after: string }
  | { kind: "value-flip"; header: number; at: number; xor: number }
  | { kind: "value-insert"; header: number; at: number; text: string }
  | { kind: "value-delete"; header: number; at: number; count: number }
  | { kind: "value-case"; header: number; upper: boolean }
  | { kind: "value-replace"; header: number; text: string }
  | { kind: "value-shift-number"; header: number; delta: number }
  | {
      kind: "list-edit";
      header: number;
      separator: string;
      op: "shuffle" | "duplicate" | "drop" | "add";
      pick: number;
      extra: string;
    }
  | { kind: "header-remove"; header: number }
  | { kind: "header-duplicate"; header: number; second: "same" | "changed"; asCase: "array" | "upper" }
  | { kind: "name-case"; header: number; upper: boolean }
  | { kind: "headers-reorder"; seed: number }
  | { kind: "header-add"; name: string; value: string }
  | { kind: "url-edit"; at: number; text: string; remove: number };

// Characters that matter to header grammars: separators, whitespace, signs, base64 and hex alphabets.
const PIECES = [
  " ",
  "  ",
  ",",
  "=",
  ";",
  "\t",
  "0",
  "1",
  "a",
  "A",
  "f",
  "+",
  "/",
  "-",
  ".",
  ":",
  "v1,",
  "v1=",
  "t=",
  "\u0000",
  "é",
];

/** Every kind of mutation, with generated positions and pieces. */
export function mutation(): fc.Arbitrary<Mutation> {
  const at = fc.nat();
  const header = fc.nat();
  const piece = fc.oneof(fc.constantFrom(...PIECES), fc.string({ minLength: 1, maxLength: 4 }));
  return fc.oneof(
    fc.record({ kind: fc.constant("body-flip-bit"), at, bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ kind: fc.constant("body-insert"), at, byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant("body-delete"), at }),
    fc.record({ kind: fc.constant("body-truncate"), keep: at }),
    fc.record({
      kind: fc.constant("body-wrap"),
      before: fc.constantFrom("", " ", "\ufeff", "\n"),
      after: fc.constantFrom("", " ", "\n", "\r\n", "\u0000"),
    }),
    fc.record({ kind: fc.constant("value-flip"), header, at, xor: fc.integer({ min: 1, max: 127 }) }),
    fc.record({ kind: fc.constant("value-insert"), header, at, text: piece }),
    fc.record({ kind: fc.constant("value-delete"), header, at, count: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ kind: fc.constant("value-case"), header, upper: fc.boolean() }),
    fc.record({ kind: fc.constant("value-replace"), header, text: fc.oneof(piece, fc.constant("")) }),
    fc.record({
      kind: fc.constant("value-shift-number"),
      header,
      delta: fc.integer({ min: -400, max: 400 }).filter((d) => d !== 0),
    }),
    fc.record({
      kind: fc.constant("list-edit"),
      header,
      separator: fc.constantFrom(" ", ",", ", "),
      op: fc.constantFrom("shuffle", "duplicate", "drop", "add"),
      pick: fc.nat(),
      extra: fc.constantFrom("v1,AAAA", "v1a,AAAA", "v1=00", "t=1", "v0=00", "", "x"),
    }),
    fc.record({ kind: fc.constant("header-remove"), header }),
    fc.record({
      kind: fc.constant("header-duplicate"),
      header,
      second: fc.constantFrom("same", "changed"),
      asCase: fc.constantFrom("array", "upper"),
    }),
    fc.record({ kind: fc.constant("name-case"), header, upper: fc.boolean() }),
    fc.record({ kind: fc.constant("headers-reorder"), seed: fc.nat() }),
    fc.record({
      kind: fc.constant("header-add"),
      name: fc.constantFrom("x-extra", "x-forwarded-for"),
      value: piece,
    }),
    fc.record({
      kind: fc.constant("url-edit"),
      at,
      text: fc.oneof(piece, fc.constant("")),
      remove: fc.integer({ min: 0, max: 2 }),
    }),
  ) as fc.Arbitrary<Mutation>;
}

/** Mutations that change no signed content in any scheme: header-name case, order, extra headers, identical copies. */
export function transportMutation(): fc.Arbitrary<Mutation> {
  const header = fc.nat();
  return fc.oneof(
    fc.record({ kind: fc.constant("name-case"), header, upper: fc.boolean() }),
    fc.record({ kind: fc.constant("headers-reorder"), seed: fc.nat() }),
    fc.record({
      kind: fc.constant("header-add"),
      name: fc.constantFrom("x-extra", "via"),
      value: fc.constant("1"),
    }),
    fc.record({
      kind: fc.constant("header-duplicate"),
      header,
      second: fc.constant("same"),
      asCase: fc.constantFrom("array", "upper"),
    }),
  ) as fc.Arbitrary<Mutation>;
}

const splice = (text: string, at: number, remove: number, insert: string) => {
  const i = at % (text.length + 1);
  return text.slice(0, i) + insert + text.slice(i + remove);
};

/** Applies one mutation to a copy of `request`. */
export function apply(request: PlainRequest, m: Mutation): PlainRequest {
  const body = Buffer.from(request.body);
  const headers = { ...request.headers };
  const names = Object.keys(headers);
  const name = "header" in m && names.length > 0 ? names[m.header % names.length]! : undefined;
  const mapValue = (fn: (value: string) => string) => {
    if (name === undefined) return;
    const value = headers[name]!;
    headers[name] = Array.isArray(value) ? value.map(fn) : fn(value);
  };
  const next: PlainRequest = { ...request, body, headers };
  switch (m.kind) {
    case "body-flip-bit":
      if (body.length > 0) body[m.at % body.length]! ^= 1 << m.bit;
      return next;
    case "body-insert":
    case "body-delete": {
      const i = m.at % (body.length + 1);
      const inserted = m.kind === "body-insert" ? [m.byte] : [];
      const removed = m.kind === "body-delete" ? 1 : 0;
      return {
        ...next,
        body: Buffer.concat([body.subarray(0, i), Buffer.from(inserted), body.subarray(i + removed)]),
      };
    }
    case "body-truncate":
      return { ...next, body: body.subarray(0, m.keep % (body.length + 1)) };
    case "body-wrap":
      return { ...next, body: Buffer.concat([Buffer.from(m.before), body, Buffer.from(m.after)]) };
    case "value-flip":
      mapValue((v) =>
        v.length === 0
          ? v
          : splice(v, m.at % v.length, 1, String.fromCharCode(v.charCodeAt(m.at % v.length) ^ m.xor)),
      );
      return next;
    case "value-insert":
      mapValue((v) => splice(v, m.at, 0, m.text));
      return next;
    case "value-delete":
      mapValue((v) => splice(v, m.at, m.count, ""));
      return next;
    case "value-case":
      mapValue((v) => (m.upper ? v.toUpperCase() : v.toLowerCase()));
      return next;
    case "value-replace":
      mapValue(() => m.text);
      return next;
    case "value-shift-number":
      mapValue((v) => v.replace(/\d+/, (digits) => String(Math.max(0, Number(digits) + m.delta))));
      return next;
    case "list-edit":
      mapValue((v) => editList(v, m));
      return next;
    case "header-remove":
      if (name !== undefined) delete headers[name];
      return next;
    case "header-duplicate": {
      if (name === undefined) return next;
      const value = [headers[name]!].flat()[0]!;
      const second = m.second === "same" ? value : `${value}x`;
      if (m.asCase === "array") headers[name] = [value, second];
      else headers[name.toUpperCase() === name ? name.toLowerCase() : name.toUpperCase()] = second;
      return next;
    }
    case "name-case":
      if (name === undefined) return next;
      return { ...next, headers: renamed(headers, name, m.upper ? name.toUpperCase() : capitalised(name)) };
    case "headers-reorder":
      return { ...next, headers: Object.fromEntries(rotate(Object.entries(headers), m.seed)) };
    case "header-add":
      headers[m.name] = m.value;
      return next;
    case "url-edit":
      return request.url === undefined ? next : { ...next, url: splice(request.url, m.at, m.remove, m.text) };
  }
}

function editList(value: string, m: Extract<Mutation, { kind: "list-edit" }>): string {
  const items = value.split(m.separator.trim() === "" ? /\s+/ : ",").filter((item) => item !== "");
  const i = m.pick % Math.max(items.length, 1);
  if (m.op === "shuffle") items.reverse();
  else if (m.op === "duplicate" && items.length > 0) items.splice(i, 0, items[i]!);
  else if (m.op === "drop") items.splice(i, 1);
  else items.splice(i, 0, m.extra);
  return items.join(m.separator);
}

function renamed(headers: PlainRequest["headers"], from: string, to: string): PlainRequest["headers"] {
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key === from ? to : key, value]));
}

const capitalised = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

function rotate<T>(items: T[], by: number): T[] {
  const k = items.length === 0 ? 0 : (by % items.length) + 1;
  return [...items.slice(k), ...items.slice(0, k)].reverse();
}
