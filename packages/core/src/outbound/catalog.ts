import type { StandardSchemaV1 } from "@standard-schema/spec";
import { ConfigurationError, type ConfigurationIssue, InvalidInputError } from "../errors.js";
import { compileTypeGlobs, isValidEventType } from "../type-glob.js";
import { quote } from "./quote.js";

/** Longest `description` of an event type: one line a reader takes in at a glance. */
export const EVENT_DESCRIPTION_MAX = 300;
/** Longest `group` name. */
export const EVENT_GROUP_MAX = 64;
/** Most event types one catalog declares. */
export const EVENT_CATALOG_MAX_TYPES = 1_000;

/** One event type of the catalog: its schema, what it means, and what it looks like. */
export interface EventDefinition<Schema extends StandardSchemaV1 = StandardSchemaV1> {
  /** Any Standard Schema (valibot, zod 4, arktype, ...): `data` must pass it before anything is written. */
  schema: Schema;
  /** One line for the people who receive it, e.g. "An order was placed and paid for." */
  description: string;
  /** At least one example of `data` (the first is the one test events send). Each must pass `schema`. */
  examples: readonly [StandardSchemaV1.InferInput<Schema>, ...StandardSchemaV1.InferInput<Schema>[]];
  /**
   * Still sent and still matched by endpoints' globs, but marked deprecated in the published
   * catalog: `true`, or a line saying what to use instead.
   */
  deprecated?: boolean | string;
  /** Where the type is listed in the published catalog (e.g. `"orders"`). Default: none. */
  group?: string;
  /**
   * The JSON Schema (draft 2020-12) of `data` as receivers get it, for the published catalog: only
   * for a schema its library cannot express (a transform's output, a custom check) or that has no
   * Standard JSON Schema converter. Default: the schema's own (`~standard.jsonSchema.output`).
   */
  jsonSchema?: Record<string, unknown>;
}

/** The catalog's declarations: event type → its definition. */
export type EventDefinitions = Record<string, EventDefinition>;

/** Any catalog made by {@link defineEvents}, whatever it declares (what options and storages take). */
export interface AnyEventCatalog {
  readonly definitions: EventDefinitions;
  readonly types: readonly string[];
  has(type: string): boolean;
  matching(glob: string): string[];
  parse(type: string, data: unknown): Promise<unknown>;
}

/** A checked event catalog, made by {@link defineEvents}: `Postel({ outbound: { events } })`. */
export interface EventCatalog<D extends EventDefinitions = EventDefinitions> extends AnyEventCatalog {
  /** The declarations as given (their schemas, descriptions and examples). */
  readonly definitions: D;
  /** Every declared type, in declaration order. */
  readonly types: readonly (keyof D & string)[];
  /** Whether `type` is declared. */
  has(type: string): type is keyof D & string;
  /** The declared types a type glob (`"order.*"`) matches; empty when it matches none. */
  matching(glob: string): (keyof D & string)[];
  /**
   * Checks `data` against the schema of `type` and resolves to the schema's output. Rejects with a
   * coded `InvalidInputError`: `UNKNOWN_EVENT_TYPE` for a type the catalog does not declare,
   * `INVALID_EVENT_DATA` (naming the type and every failing path) for data its schema refuses.
   */
  parse(type: string, data: unknown): Promise<unknown>;
}

/** The event `send()` takes for a catalog: a declared `type`, and `data` that type's schema accepts. */
export type CatalogEvent<D extends EventDefinitions, Extra> = {
  [T in keyof D & string]: Extra & { type: T; data: StandardSchemaV1.InferInput<D[T]["schema"]> };
}[keyof D & string];

const CATALOG = Symbol.for("postel.eventCatalog");

/**
 * Declares the event types Postel sends, with any Standard Schema library. With the catalog in
 * `Postel({ outbound: { events } })`, `send()` and `sendBatch()` accept only declared types and infer
 * `data` from the schema (a typo is a compile error), check `data` before anything is written, and
 * endpoints may only subscribe to globs that match a declared type. Throws a `ConfigurationError`
 * (`INVALID_CONFIGURATION`) listing every bad type name, description, group or example.
 * @example
 * import * as v from "valibot";
 * export const events = defineEvents({
 *   "order.created": {
 *     schema: v.object({ id: v.string(), total: v.number() }),
 *     description: "An order was placed.",
 *     examples: [{ id: "ord_1", total: 12.5 }],
 *     group: "orders",
 *   },
 * });
 * const postel = Postel({ outbound: { storage, events } });
 * await postel.outbound.send({ type: "order.created", data: { id: "ord_2", total: 3 } });
 */
export function defineEvents<const D extends EventDefinitions>(
  definitions: D & { [T in keyof D]: EventDefinition<D[T]["schema"]> },
): EventCatalog<D> {
  const issues = catalogIssues(definitions);
  if (issues.length > 0) throw new ConfigurationError(issues, "event catalog (defineEvents)");
  const types = Object.keys(definitions) as (keyof D & string)[];
  const declared = new Set<string>(types);
  const catalog: EventCatalog<D> & { [CATALOG]: true } = {
    [CATALOG]: true,
    definitions,
    types,
    has: (type): type is keyof D & string => declared.has(type),
    matching: (glob) => types.filter(compileTypeGlobs([glob])),
    async parse(type, data) {
      const definition = declared.has(type) ? definitions[type] : undefined;
      if (definition === undefined) throw unknownType(types, type);
      const result = await definition.schema["~standard"].validate(data);
      if (result.issues) throw invalidData(type, result.issues);
      return result.value;
    },
  };
  return Object.freeze(catalog);
}

/** Whether `value` is a catalog made by {@link defineEvents}. */
export function isEventCatalog(value: unknown): value is AnyEventCatalog {
  return typeof value === "object" && value !== null && CATALOG in value;
}

/**
 * `data` checked against the catalog, ready to serialise: the schema's output. Events whose shape or
 * type is malformed are returned as they are, for `toNewMessage` to refuse with its own error. With
 * `path` (`events[3]`), the error's message starts with it.
 */
export async function checkAgainstCatalog<E extends { type: unknown; data?: unknown }>(
  catalog: AnyEventCatalog,
  event: E,
  path?: string,
): Promise<E> {
  if (typeof event !== "object" || event === null || !isValidEventType(event.type)) return event;
  try {
    const data = await catalog.parse(event.type, event.data);
    return data === event.data ? event : { ...event, data };
  } catch (error) {
    if (path !== undefined && error instanceof InvalidInputError) {
      throw new InvalidInputError(error.code, `${path}: ${error.message}`);
    }
    throw error;
  }
}

/**
 * Why each of `globs` may not be subscribed to under `catalog`: the globs that match no declared
 * type, as endpoint input problems (`types[1]`).
 */
export function unmatchedGlobs(
  catalog: AnyEventCatalog,
  globs: readonly string[],
): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  globs.forEach((glob, i) => {
    if (catalog.matching(glob).length > 0) return;
    problems.push({
      path: `types[${i}]`,
      message: `${quote(glob)} matches no event type of the catalog (${listTypes(catalog.types)}); subscribe to a declared type or a glob that matches one`,
    });
  });
  return problems;
}

/** Throws `UNKNOWN_EVENT_TYPE` unless `catalog` declares `type`. */
export function assertDeclared(catalog: AnyEventCatalog, type: string): void {
  if (!catalog.has(type)) throw unknownType(catalog.types, type);
}

function unknownType(types: readonly string[], type: string): InvalidInputError {
  return new InvalidInputError(
    "UNKNOWN_EVENT_TYPE",
    `Event type ${quote(type)} is not in the event catalog (${listTypes(types)}); declare it in defineEvents() or fix the name.`,
  );
}

function invalidData(type: string, issues: readonly StandardSchemaV1.Issue[]): InvalidInputError {
  const lines = issues.map((issue) => `  - ${issuePath(issue)}: ${issue.message}`);
  return new InvalidInputError(
    "INVALID_EVENT_DATA",
    `Event data does not match the schema of ${quote(type)}:\n${lines.join("\n")}`,
  );
}

/** `data.items[0].sku`: the issue's path below `data`. */
export function issuePath(issue: StandardSchemaV1.Issue): string {
  let path = "data";
  for (const segment of issue.path ?? []) {
    const key = typeof segment === "object" && segment !== null ? segment.key : segment;
    if (typeof key === "number") path += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) path += `.${key}`;
    else path += `[${JSON.stringify(String(key))}]`;
  }
  return path;
}

function listTypes(types: readonly string[]): string {
  const shown = types.slice(0, 10).join(", ");
  return types.length > 10 ? `${shown}, and ${types.length - 10} more` : shown;
}

function catalogIssues(definitions: unknown): ConfigurationIssue[] {
  if (typeof definitions !== "object" || definitions === null || Array.isArray(definitions)) {
    return [
      {
        path: "",
        message:
          'must map event types to { schema, description, examples }, e.g. { "order.created": { ... } }',
      },
    ];
  }
  const entries = Object.entries(definitions);
  const issues: ConfigurationIssue[] = [];
  if (entries.length === 0) issues.push({ path: "", message: "declares no event type" });
  if (entries.length > EVENT_CATALOG_MAX_TYPES) {
    issues.push({
      path: "",
      message: `declares ${entries.length} event types; at most ${EVENT_CATALOG_MAX_TYPES}`,
    });
  }
  for (const [type, definition] of entries) {
    const at = JSON.stringify(type);
    if (!isValidEventType(type)) {
      issues.push({
        path: at,
        message:
          'is not a valid event type: use 1-255 letters, digits and "_ . : - /", not starting or ending with a dot, e.g. "order.created"',
      });
    }
    if (typeof definition !== "object" || definition === null) {
      issues.push({ path: at, message: "must be { schema, description, examples }" });
      continue;
    }
    const { schema, description, examples, deprecated, group, jsonSchema, ...rest } = definition as Record<
      string,
      unknown
    >;
    for (const key of Object.keys(rest)) {
      issues.push({
        path: `${at}.${key}`,
        message:
          "is not a field of an event definition (schema, description, examples, deprecated, group, jsonSchema)",
      });
    }
    const standard = (schema as { "~standard"?: { version?: unknown; validate?: unknown } } | null)?.[
      "~standard"
    ];
    if (typeof standard !== "object" || standard === null || typeof standard.validate !== "function") {
      issues.push({
        path: `${at}.schema`,
        message: "must be a Standard Schema (valibot, zod 4, arktype, ...)",
      });
    }
    if (
      typeof description !== "string" ||
      description.trim() === "" ||
      /[\r\n]/.test(description) ||
      description.length > EVENT_DESCRIPTION_MAX
    ) {
      issues.push({
        path: `${at}.description`,
        message: `must be one line of 1-${EVENT_DESCRIPTION_MAX} characters`,
      });
    }
    if (!Array.isArray(examples) || examples.length === 0) {
      issues.push({ path: `${at}.examples`, message: "must list at least one example of data" });
    } else if (typeof standard?.validate === "function") {
      examples.forEach((example, i) => {
        const result = (standard.validate as StandardSchemaV1.Props["validate"])(example);
        // An asynchronous schema's examples are checked where they are used (catalog exports, test events).
        if (result instanceof Promise) return;
        for (const issue of result.issues ?? []) {
          issues.push({
            path: `${at}.examples[${i}]`,
            message: `fails its schema at ${issuePath(issue)}: ${issue.message}`,
          });
        }
      });
    }
    if (
      deprecated !== undefined &&
      typeof deprecated !== "boolean" &&
      (typeof deprecated !== "string" || deprecated.trim() === "")
    ) {
      issues.push({
        path: `${at}.deprecated`,
        message: "must be true, false or a line saying what to use instead",
      });
    }
    if (
      group !== undefined &&
      (typeof group !== "string" ||
        !/^[A-Za-z0-9][A-Za-z0-9 _.:/-]*$/.test(group) ||
        group.length > EVENT_GROUP_MAX)
    ) {
      issues.push({
        path: `${at}.group`,
        message: `must be a name of 1-${EVENT_GROUP_MAX} letters, digits, spaces and "_ . : / -"`,
      });
    }
    if (
      jsonSchema !== undefined &&
      (typeof jsonSchema !== "object" || jsonSchema === null || Array.isArray(jsonSchema))
    ) {
      issues.push({
        path: `${at}.jsonSchema`,
        message: 'must be a JSON Schema object, e.g. { type: "object", properties: { ... } }',
      });
    }
  }
  return issues;
}
