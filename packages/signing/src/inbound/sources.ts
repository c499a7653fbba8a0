import type { Verifier } from "../verifier.js";
import { createVerifier } from "../verify.js";
import { type Duration, parseDuration } from "./duration.js";
import { ConfigurationError, type ConfigurationIssue } from "../errors.js";
import type { DedupStore } from "./dedup.js";
import { isStandardSchema, type StandardSchemaV1 } from "./standard-schema.js";

/** A verifier, or a Standard Webhooks secret / public key (`whsec_...`, `whpk_...`). */
export type VerifierInput = Verifier | string;

/** How one inbound source verifies, deduplicates and validates what it receives. */
export interface InboundSourceOptions<TPayload = unknown> {
  /** One verifier or several (rotation, several senders); the first that matches wins. */
  verify: VerifierInput | readonly VerifierInput[];
  /** Timestamp tolerance for secrets given as strings (providers carry their own). Default `"5m"`. */
  tolerance?: Duration;
  /** Deduplicate on the webhook id: a store, or a store with its record lifetimes. */
  dedup?: DedupStore | { store: DedupStore; ttl?: Duration; processingTimeout?: Duration };
  /** Validate the parsed payload (any Standard Schema: valibot, zod, ...). */
  schema?: StandardSchemaV1<unknown, TPayload>;
  /**
   * The sender's event catalog (`defineEvents()` of `@postel/core`): the body must be a Standard
   * Webhooks event `{ type, timestamp, data }` of a declared type whose `data` passes that type's
   * schema, and the handler gets `event.type` narrowing `event.data` (the schema's output). Instead
   * of `schema`.
   */
  events?: ReceivingCatalog;
  /**
   * A well-formed event of a type the catalog does not declare: `"refuse"` (default) answers 422
   * `UNKNOWN_EVENT_TYPE` (a Postel sender dead-letters it, to replay once the receiver knows the
   * type); `"acknowledge"` answers 200 without calling the handler.
   */
  unknownTypes?: "refuse" | "acknowledge";
  /** How to parse the verified body: JSON (default), form fields, or text. */
  parse?: "json" | "form" | "text";
  /** Largest body accepted, refused before hashing. Default 1 MiB. */
  maxBodyBytes?: number;
}

/**
 * What a receiving source needs of an event catalog: each declared type's schema. `defineEvents()`
 * of `@postel/core` makes one (the same definition the sender uses).
 */
export interface ReceivingCatalog {
  readonly types: readonly string[];
  readonly definitions: { readonly [type: string]: { readonly schema: StandardSchemaV1 } };
}

/** A source after validation. */
export interface InboundSource {
  name: string;
  verifiers: Verifier[];
  dedup: { store: DedupStore; ttlMs: number; processingTimeoutMs: number } | null;
  schema: StandardSchemaV1 | null;
  events: ReceivingCatalog | null;
  unknownTypes: "refuse" | "acknowledge";
  parse: "json" | "form" | "text";
  maxBodyBytes: number;
}

const isVerifier = (x: unknown): x is Verifier =>
  typeof x === "object" && x !== null && typeof (x as Verifier).verify === "function";
const isDedupStore = (x: unknown): x is DedupStore =>
  typeof x === "object" && x !== null && typeof (x as DedupStore).claim === "function";

/** A catalog made by `defineEvents()` (any copy of `@postel/core`: the brand is a registered symbol). */
function isReceivingCatalog(value: unknown): value is ReceivingCatalog {
  return typeof value === "object" && value !== null && Symbol.for("postel.eventCatalog") in value;
}

/** Validates every source, throwing one `ConfigurationError` that lists every problem. */
export function parseInboundSources(sources: unknown, pathPrefix = "inbound"): Map<string, InboundSource> {
  const issues: ConfigurationIssue[] = [];
  const parsed = new Map<string, InboundSource>();
  if (typeof sources !== "object" || sources === null) {
    throw new ConfigurationError([{ path: pathPrefix, message: "must map source names to { verify, ... }" }]);
  }
  for (const [name, raw] of Object.entries(sources)) {
    const path = `${pathPrefix}.${name}`;
    const source = parseSource(name, raw, path, issues);
    if (source) parsed.set(name, source);
  }
  if (issues.length > 0) throw new ConfigurationError(issues, "inbound options");
  return parsed;
}

function parseSource(
  name: string,
  raw: unknown,
  path: string,
  issues: ConfigurationIssue[],
): InboundSource | null {
  if (typeof raw !== "object" || raw === null) {
    issues.push({
      path,
      message:
        "must be { verify, tolerance?, dedup?, schema?, events?, unknownTypes?, parse?, maxBodyBytes? }",
    });
    return null;
  }
  const o = raw as Record<string, unknown>;
  const known = ["verify", "tolerance", "dedup", "schema", "events", "unknownTypes", "parse", "maxBodyBytes"];
  for (const key of Object.keys(o))
    if (!known.includes(key))
      issues.push({ path: `${path}.${key}`, message: "unknown option (check the spelling)" });
  const tolerance = o["tolerance"] === undefined ? 300_000 : parseDuration(o["tolerance"]);
  if (tolerance === undefined)
    issues.push({ path: `${path}.tolerance`, message: 'must be a duration like "5m" or milliseconds' });
  const verifiers = parseVerifiers(o["verify"], tolerance ?? 300_000, `${path}.verify`, issues);
  const dedup = parseDedup(o["dedup"], `${path}.dedup`, issues);
  const schema = o["schema"];
  if (schema !== undefined && !isStandardSchema(schema)) {
    issues.push({
      path: `${path}.schema`,
      message: "must be a Standard Schema (valibot, zod, arktype, ...)",
    });
  }
  const events = o["events"];
  if (events !== undefined && !isReceivingCatalog(events)) {
    issues.push({
      path: `${path}.events`,
      message: "must be an event catalog made by defineEvents() of @postel/core",
    });
  }
  if (events !== undefined && schema !== undefined) {
    issues.push({
      path: `${path}.schema`,
      message: "give either schema or events: with a catalog, each type's schema checks its data",
    });
  }
  const unknownTypes = o["unknownTypes"] ?? "refuse";
  if (unknownTypes !== "refuse" && unknownTypes !== "acknowledge") {
    issues.push({ path: `${path}.unknownTypes`, message: 'must be "refuse" or "acknowledge"' });
  } else if (o["unknownTypes"] !== undefined && events === undefined) {
    issues.push({ path: `${path}.unknownTypes`, message: "applies only with events (a catalog)" });
  }
  const parse = o["parse"] ?? "json";
  if (events !== undefined && parse !== "json") {
    issues.push({ path: `${path}.parse`, message: 'must be "json" with events: catalog events are JSON' });
  }
  if (parse !== "json" && parse !== "form" && parse !== "text")
    issues.push({ path: `${path}.parse`, message: 'must be "json", "form" or "text"' });
  const maxBodyBytes = o["maxBodyBytes"] ?? 1024 * 1024;
  if (typeof maxBodyBytes !== "number" || !Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    issues.push({ path: `${path}.maxBodyBytes`, message: "must be a positive integer number of bytes" });
  }
  return {
    name,
    verifiers,
    dedup,
    schema: isStandardSchema(schema) ? schema : null,
    events: isReceivingCatalog(events) ? events : null,
    unknownTypes: unknownTypes === "acknowledge" ? "acknowledge" : "refuse",
    parse: parse as InboundSource["parse"],
    maxBodyBytes: maxBodyBytes as number,
  };
}

/** Consecutive secret strings become one Standard Webhooks verifier, so rotation compares in constant time. */
function parseVerifiers(
  raw: unknown,
  tolerance: number,
  path: string,
  issues: ConfigurationIssue[],
): Verifier[] {
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  if (list.length === 0) {
    issues.push({
      path,
      message:
        "is required: a secret (whsec_...), a public key (whpk_...) or a verifier such as stripe({ secret })",
    });
    return [];
  }
  const verifiers: Verifier[] = [];
  let keys: string[] = [];
  const flush = () => {
    if (keys.length === 0) return;
    try {
      verifiers.push(createVerifier(keys, { tolerance }));
    } catch (error) {
      issues.push({ path, message: error instanceof Error ? error.message : "contains an invalid key" });
    }
    keys = [];
  };
  list.forEach((entry: unknown, i: number) => {
    if (typeof entry === "string") keys.push(entry);
    else if (isVerifier(entry)) {
      flush();
      verifiers.push(entry);
    } else issues.push({ path: `${path}[${i}]`, message: "must be a secret string or a verifier" });
  });
  flush();
  return verifiers;
}

function parseDedup(raw: unknown, path: string, issues: ConfigurationIssue[]): InboundSource["dedup"] {
  if (raw === undefined || raw === false) return null;
  const options = isDedupStore(raw)
    ? { store: raw }
    : (raw as { store?: unknown; ttl?: unknown; processingTimeout?: unknown });
  if (!isDedupStore(options.store)) {
    issues.push({
      path,
      message:
        "must be a DedupStore (InMemoryDedupStore(), or your storage's dedup store) or { store, ttl? }",
    });
    return null;
  }
  const ttlMs = options.ttl === undefined ? 7 * 86_400_000 : parseDuration(options.ttl);
  const processingTimeoutMs =
    options.processingTimeout === undefined ? 5 * 60_000 : parseDuration(options.processingTimeout);
  if (ttlMs === undefined) issues.push({ path: `${path}.ttl`, message: 'must be a duration like "7d"' });
  if (processingTimeoutMs === undefined)
    issues.push({ path: `${path}.processingTimeout`, message: 'must be a duration like "5m"' });
  return { store: options.store, ttlMs: ttlMs ?? 0, processingTimeoutMs: processingTimeoutMs ?? 0 };
}
