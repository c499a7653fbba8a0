import { createSigner } from "@postel/signing";
import * as v from "valibot";
import { unmatchedGlobs } from "./catalog.js";
import { ExponentialBackoff, LinearBackoff, type RetryPolicy } from "../backoff.js";
import type { OutboundConfig } from "../config/resolved.js";
import {
  AutoDisableSchema,
  CircuitBreakerSchema,
  objectNotArray,
  maxInFlightSchema,
  RetryPolicySchema,
  rateLimitSchema,
  toConfigurationIssues,
} from "../config/schemas.js";
import { InvalidInputError } from "../errors.js";
import { validateEventFilter } from "../event-filter.js";
import type { EndpointFields, RetryPolicySpec } from "../storage/records.js";
import { unstorableIn } from "../storable-text.js";
import { isValidTypeGlob } from "../type-glob.js";

// Postel owns these: a custom header may never change what is signed or how it is framed.
const RESERVED_HEADERS = /^(webhook-|content-type$|content-length$|host$|transfer-encoding$|connection$)/i;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const USE_DEFAULT = "use null for the default in outbound.limits";

const isJsonObject = (x: unknown): x is Record<string, unknown> => {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  try {
    JSON.stringify(x);
    return true;
  } catch {
    return false;
  }
};

/** Bounds of what an endpoint stores (README "Endpoints"): every instance loads every endpoint. */
export const ENDPOINT_LIMITS = {
  urlLength: 2_048,
  descriptionLength: 1_000,
  types: 100,
  headers: 50,
  headerValueLength: 4_096,
  /** Serialised JSON, in UTF-8 bytes. */
  metadataBytes: 16 * 1024,
  filterBytes: 16 * 1024,
  nameLength: 255,
} as const;

const jsonAtMost = (what: string, bytes: number) =>
  v.check(
    (x: Record<string, unknown>) => Buffer.byteLength(JSON.stringify(x), "utf8") <= bytes,
    `${what} must serialise to at most ${bytes / 1024} KiB of JSON; keep large data in your own tables and store its id`,
  );

const EndpointInputSchema = v.strictObject({
  url: v.optional(
    v.pipe(
      v.string("url must be a string"),
      v.minLength(1, "url must not be empty"),
      v.maxLength(ENDPOINT_LIMITS.urlLength, `url must be at most ${ENDPOINT_LIMITS.urlLength} characters`),
    ),
  ),
  description: v.optional(
    v.nullable(
      v.pipe(
        v.string(),
        v.maxLength(
          ENDPOINT_LIMITS.descriptionLength,
          `description must be at most ${ENDPOINT_LIMITS.descriptionLength} characters`,
        ),
      ),
    ),
  ),
  types: v.optional(
    v.pipe(
      v.array(
        v.custom<string>(isValidTypeGlob, 'each type must be an event type or glob such as "order.*" or "*"'),
      ),
      v.minLength(1, 'types must list at least one type or glob; use ["*"] for everything'),
      v.maxLength(
        ENDPOINT_LIMITS.types,
        `types must list at most ${ENDPOINT_LIMITS.types} types or globs; use a glob such as "order.*" to cover many`,
      ),
    ),
  ),
  filter: v.optional(
    v.nullable(
      v.pipe(
        v.custom<Record<string, unknown>>(isJsonObject, "filter must be a JSON object"),
        jsonAtMost("filter", ENDPOINT_LIMITS.filterBytes),
      ),
    ),
  ),
  filterFn: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(ENDPOINT_LIMITS.nameLength)))),
  transform: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(ENDPOINT_LIMITS.nameLength)))),
  headers: v.optional(
    v.pipe(
      objectNotArray("headers"),
      v.record(
        v.string(),
        v.pipe(
          v.string("header values must be strings"),
          v.maxLength(
            ENDPOINT_LIMITS.headerValueLength,
            `header values must be at most ${ENDPOINT_LIMITS.headerValueLength} characters`,
          ),
        ),
      ),
      v.check(
        (h) => Object.keys(h).length <= ENDPOINT_LIMITS.headers,
        `headers must set at most ${ENDPOINT_LIMITS.headers} headers`,
      ),
    ),
  ),
  retryPolicy: v.optional(
    v.nullable(v.union([v.string(), RetryPolicySchema], "retryPolicy must be a policy or a registered name")),
  ),
  circuitBreaker: v.optional(v.nullable(CircuitBreakerSchema)),
  autoDisable: v.optional(v.nullable(AutoDisableSchema)),
  maxInFlight: v.optional(v.nullable(maxInFlightSchema(USE_DEFAULT))),
  rateLimit: v.optional(v.nullable(rateLimitSchema(USE_DEFAULT))),
  secret: v.optional(v.string("secret must be a string")),
  tenantId: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(255)))),
  metadata: v.optional(
    v.pipe(
      v.custom<Record<string, unknown>>(isJsonObject, "metadata must be a JSON object"),
      jsonAtMost("metadata", ENDPOINT_LIMITS.metadataBytes),
    ),
  ),
  onKeyFailure: v.optional(v.picklist(["skip", "hold"], 'onKeyFailure must be "skip" or "hold"')),
});

/** Validated endpoint input: the storable fields given, plus the secret. */
export interface ParsedEndpointInput {
  fields: Partial<EndpointFields>;
  secret: string | undefined;
}

/**
 * Validates `endpoints.create/update` input against the schema and the registries in `config`,
 * throwing `InvalidInputError` (`INVALID_ENDPOINT`) that lists every problem. Writes nothing.
 */
export function parseEndpointInput(
  input: unknown,
  config: OutboundConfig,
  mode: "create" | "update",
): ParsedEndpointInput {
  const result = v.safeParse(EndpointInputSchema, input ?? {});
  const problems = result.success ? [] : toConfigurationIssues(result.issues);
  if (Array.isArray(input))
    problems.push({ path: "", message: "must be an object of endpoint fields, not an array" });
  // `{ url: undefined }` is as missing as no url at all.
  if (
    mode === "create" &&
    (typeof input !== "object" || input === null || (input as { url?: unknown }).url === undefined)
  ) {
    problems.push({ path: "url", message: "is required" });
  }
  if (!result.success || problems.length > 0) throw invalidEndpoint(problems);
  const o = result.output;
  const fields: Partial<EndpointFields> = {};
  if (o.url !== undefined) fields.url = o.url;
  if (o.description !== undefined) fields.description = o.description;
  if (o.types !== undefined) {
    // Against the catalog: a glob no declared type matches would never receive anything.
    if (config.events) problems.push(...unmatchedGlobs(config.events, o.types));
    fields.types = o.types;
  }
  if (o.filter !== undefined) {
    if (o.filter !== null) {
      for (const problem of validateEventFilter(o.filter))
        problems.push({ path: "filter", message: problem });
    }
    fields.filter = o.filter;
  }
  if (o.filterFn !== undefined) {
    if (o.filterFn !== null && !(o.filterFn in config.filters)) {
      problems.push({
        path: "filterFn",
        message: `"${o.filterFn}" is not registered; add it to outbound.filters`,
      });
    }
    fields.filterFn = o.filterFn;
  }
  if (o.transform !== undefined) {
    if (o.transform !== null && !(o.transform in config.transforms)) {
      problems.push({
        path: "transform",
        message: `"${o.transform}" is not registered; add it to outbound.transforms`,
      });
    }
    fields.transform = o.transform;
  }
  if (o.headers !== undefined) {
    for (const [name, value] of Object.entries(o.headers)) {
      if (!HEADER_NAME.test(name))
        problems.push({ path: `headers.${name}`, message: "is not a valid header name" });
      else if (RESERVED_HEADERS.test(name)) {
        problems.push({ path: `headers.${name}`, message: "is set by Postel and cannot be overridden" });
      } else if (/[\r\n\0]/.test(value))
        problems.push({ path: `headers.${name}`, message: "value contains CR, LF or NUL" });
    }
    fields.headers = o.headers;
  }
  if (o.retryPolicy !== undefined) {
    const spec = o.retryPolicy === null ? null : retryPolicySpec(o.retryPolicy, config);
    if (spec !== undefined) fields.retryPolicy = spec;
    else if (typeof o.retryPolicy === "string") {
      problems.push({
        path: "retryPolicy",
        message: `"${o.retryPolicy}" is not registered in outbound.retryPolicies`,
      });
    } else {
      problems.push({
        path: "retryPolicy",
        message: "a Custom policy must be registered in outbound.retryPolicies and referenced by name",
      });
    }
  }
  if (o.circuitBreaker !== undefined) fields.circuitBreaker = o.circuitBreaker;
  if (o.autoDisable !== undefined) fields.autoDisable = o.autoDisable;
  if (o.maxInFlight !== undefined) fields.maxInFlight = o.maxInFlight;
  if (o.rateLimit !== undefined) fields.rateLimit = o.rateLimit;
  if (o.tenantId !== undefined) fields.tenantId = o.tenantId;
  if (o.metadata !== undefined) fields.metadata = o.metadata;
  if (o.onKeyFailure !== undefined) fields.onKeyFailure = o.onKeyFailure;
  if (o.secret !== undefined) {
    try {
      createSigner([o.secret]);
    } catch (error) {
      problems.push({
        path: "secret",
        message: error instanceof Error ? error.message : "is not a valid secret",
      });
    }
  }
  // Every string stored with the endpoint must come back as given (no NUL, no lone surrogate).
  for (const [name, value] of Object.entries({ ...fields, secret: o.secret })) {
    problems.push(...unstorableIn(value, name));
  }
  if (problems.length > 0) throw invalidEndpoint(problems);
  return { fields, secret: o.secret };
}

function invalidEndpoint(problems: { path: string; message: string }[]): InvalidInputError {
  const lines = problems.map((p) => `  - ${p.path || "(root)"}: ${p.message}`).join("\n");
  return new InvalidInputError("INVALID_ENDPOINT", `Invalid endpoint:\n${lines}`);
}

/** A storable description of `policy`, or undefined when it cannot be stored (an unregistered Custom). */
export function retryPolicySpec(
  policy: RetryPolicy | string,
  config: OutboundConfig,
): RetryPolicySpec | undefined {
  if (typeof policy === "string")
    return policy in config.retryPolicies ? { kind: "named", name: policy } : undefined;
  if (policy.spec) return policy.spec;
  const name = Object.entries(config.retryPolicies).find(([, registered]) => registered === policy)?.[0];
  return name === undefined ? undefined : { kind: "named", name };
}

/** The policy a stored spec describes; a name no longer registered falls back to the default policy. */
export function retryPolicyFromSpec(spec: RetryPolicySpec | null, config: OutboundConfig): RetryPolicy {
  if (spec === null) return config.retryPolicy;
  switch (spec.kind) {
    case "exponential":
      return ExponentialBackoff({
        schedule: spec.schedule,
        maxAttempts: spec.maxAttempts,
        jitter: spec.jitter,
      });
    case "linear":
      return LinearBackoff({ step: spec.stepMs, maxAttempts: spec.maxAttempts, jitter: spec.jitter });
    case "named":
      return config.retryPolicies[spec.name] ?? config.retryPolicy;
  }
}
