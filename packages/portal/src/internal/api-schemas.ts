/**
 * The JSON Schemas (draft 2020-12) of what the portal's API reads and writes, as the OpenAPI
 * document's `components.schemas`. They describe the JSON of the tenant's views in `scope.ts`
 * exactly: every time is epoch milliseconds (a number), every absent value `null`.
 */

/** A JSON Schema, as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

/** A reference to the schema `name` of {@link API_SCHEMAS} (the document's test resolves every one). */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const string = { type: "string" };
const orNull = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema["type"], "null"] });
const time = (description: string): JsonSchema => ({
  type: "integer",
  description: `${description} (epoch ms).`,
});
const count = (description: string): JsonSchema => ({ type: "integer", minimum: 0, description });
const enumOf = (values: readonly string[]): JsonSchema => ({ type: "string", enum: [...values] });
const object = (properties: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema => ({
  type: "object",
  required: Object.keys(properties).filter((name) => !optional.includes(name)),
  properties,
});
const page = (item: string): JsonSchema =>
  object({
    items: { type: "array", items: ref(item) },
    nextCursor: { ...orNull(string), description: "Pass as `cursor` for the next page; null on the last." },
  });

// What a tenant may set on an endpoint: on a create only `url` is required; null clears a field.
const tenantFields = {
  url: { type: "string", format: "uri", description: "Where deliveries are POSTed (http or https)." },
  types: {
    type: "array",
    items: string,
    description: 'Event types or globs (`*` matches any run of characters). Default `["*"]`.',
  },
  filter: {
    type: ["object", "null"],
    description:
      'A structural filter on the event, e.g. `{ "data.amount": { "$gte": 100 } }`; null for none.',
  },
  description: { type: ["string", "null"], description: "A note for people; null for none." },
};

/** Every component schema of the document, by name. */
export const API_SCHEMAS = {
  EventType: object({
    type: string,
    description: string,
    group: orNull(string),
    deprecated: {
      type: ["boolean", "string", "null"],
      description: "`true`, or what to use instead; null when current.",
    },
  }),
  EventTypeList: object({ items: { type: "array", items: ref("EventType") } }),
  Endpoint: object({
    id: string,
    url: tenantFields.url,
    description: orNull(string),
    types: tenantFields.types,
    filter: tenantFields.filter,
    state: enumOf(["active", "circuit-open", "disabled"]),
    disabledReason: orNull(string),
    circuitOpenUntil: orNull(time("While circuit-open, when the next probe may run")),
    headerNames: {
      type: "array",
      items: string,
      description: "The names of the headers the app adds to every request (never their values).",
    },
    createdAt: time("When it was created"),
    updatedAt: time("When it last changed"),
  }),
  EndpointPage: page("Endpoint"),
  EndpointInput: {
    ...object(tenantFields, ["types", "filter", "description"]),
    description: "What a tenant may set on an endpoint; any other field is ignored.",
  },
  EndpointPatch: {
    ...object(tenantFields, Object.keys(tenantFields)),
    description: "The fields to change; the others are kept.",
  },
  Message: object({
    id: string,
    type: string,
    data: { description: "The event's data, as it was sent." },
    status: enumOf(["pending", "dispatched", "dead-lettered", "expired"]),
    idempotencyKey: orNull(string),
    createdAt: time("When it was sent"),
    expiresAt: orNull(time("When it expires if not yet delivered")),
    finishedAt: orNull(time("When it reached a final status")),
  }),
  MessagePage: page("Message"),
  Delivery: object({
    id: string,
    messageId: string,
    endpointId: string,
    webhookId: { ...string, description: "The `webhook-id` the receiver sees; stable across retries." },
    status: enumOf([
      "pending",
      "held",
      "waiting",
      "succeeded",
      "failed",
      "dead-lettered",
      "expired",
      "cancelled",
    ]),
    attemptsMade: count("HTTP attempts made so far."),
    retriesUsed: count("Retries consumed so far (the first attempt is not a retry)."),
    nextAttemptAt: time("When it is next due"),
    lastError: orNull(string),
    createdAt: time("When it was created"),
    updatedAt: time("When it last changed"),
  }),
  Attempt: object({
    id: string,
    deliveryId: string,
    messageId: string,
    endpointId: string,
    webhookId: string,
    attemptNumber: {
      type: "integer",
      minimum: 1,
      description: "1 for the first attempt, 2 for the first retry…",
    },
    startedAt: time("When it started"),
    latencyMs: count("How long it took, in milliseconds."),
    outcome: enumOf(["success", "retryable", "permanent"]),
    statusCode: { ...orNull({ type: "integer" }), description: "The HTTP status; null when none arrived." },
    errorCode: {
      ...orNull(string),
      description: "`TIMEOUT`, `CONNECTION_REFUSED`… when no response arrived.",
    },
    error: orNull(string),
    responseSnippet: { ...orNull(string), description: "The first bytes of the response body." },
  }),
  TenantDelivery: object({ delivery: ref("Delivery"), attempts: { type: "array", items: ref("Attempt") } }),
  AuditEntry: object({
    id: string,
    at: time("When it was recorded"),
    tenantId: orNull(string),
    actor: { ...string, description: "Who did it (the app's name for the user)." },
    action: { ...string, description: "What was done, e.g. `endpoint.create`." },
    target: { ...orNull(string), description: "What it was done to, e.g. an endpoint id." },
    source: { ...string, description: "Where it was done, e.g. `portal`." },
    detail: {
      type: ["object", "null"],
      additionalProperties: { type: ["string", "number", "boolean", "null"] },
    },
    key: orNull(string),
  }),
  AuditEntryPage: page("AuditEntry"),
  Error: object({
    error: object({
      code: { ...string, description: "Stable and machine-readable, e.g. `ENDPOINT_NOT_FOUND`." },
      message: { ...string, description: "What was wrong and what to do instead, for people." },
    }),
  }),
  Deleted: object({ deleted: { const: true } }),
  Secret: object({ secret: { ...string, description: "The signing secret (`whsec_…`)." } }),
  RotateSecretInput: object(
    {
      overlap: {
        type: "string",
        pattern: "^\\d+(\\.\\d+)?(ms|s|m|h|d)$",
        description: "How long the old secret keeps signing beside the new one, e.g. `1h`. Default `24h`.",
      },
    },
    ["overlap"],
  ),
  TestEventInput: object({
    type: { ...string, description: "A type of the app's event catalog; its first example is sent." },
  }),
  TestEventSent: object({ messageId: string }),
  RecoverInput: object(
    {
      since: {
        type: "string",
        format: "date-time",
        description: "Recover deliveries of messages sent since.",
      },
      dryRun: { type: "boolean", description: "Only count what would be sent again. Default false." },
    },
    ["dryRun"],
  ),
  RecoverCount: object({ wouldReplay: count("How many deliveries a recover would send again.") }),
  Replayed: object({ replayed: count("How many deliveries were sent again.") }),
} satisfies Record<string, JsonSchema>;
