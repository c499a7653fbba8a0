import type { StandardJSONSchemaV1 } from "@standard-schema/spec";
import { PostelError } from "../errors.js";
import type { AnyEventCatalog, EventDefinition } from "./catalog.js";

/** A JSON Schema (draft 2020-12) document or subschema, as plain JSON. */
export type JsonSchema = Record<string, unknown>;

/** What went wrong with one event type while exporting the catalog. */
export interface CatalogExportIssue {
  /** The event type. */
  type: string;
  /** Why its schema could not be exported, and how to fix it. */
  message: string;
}

/**
 * The catalog could not be exported: a schema without a Standard JSON Schema converter, one its
 * library cannot express in JSON Schema (a transform's output, a custom check), or an example its
 * schema refuses. Code `EVENT_SCHEMA_NOT_EXPRESSIBLE`; `issues` names every type at fault.
 */
export class CatalogExportError extends PostelError {
  readonly issues: readonly CatalogExportIssue[];

  constructor(issues: readonly CatalogExportIssue[]) {
    const lines = issues.map((issue) => `  - ${JSON.stringify(issue.type)}: ${issue.message}`);
    super("EVENT_SCHEMA_NOT_EXPRESSIBLE", `The event catalog cannot be exported:\n${lines.join("\n")}`);
    this.issues = issues;
  }
}

const DIALECT = "https://json-schema.org/draft/2020-12/schema";

/**
 * The JSON Schema (draft 2020-12) of each declared type's `data`, as receivers get it: the schema's
 * output (what `send()` stores), with the type's description, examples (each passed through its
 * schema) and `deprecated`. Comes from the definition's `jsonSchema` when given, else from the
 * schema's Standard JSON Schema converter (zod 4.2+, arktype 2.1.28+, valibot through
 * `toStandardJsonSchema()` of `@valibot/to-json-schema`). Rejects with `CatalogExportError`
 * (`EVENT_SCHEMA_NOT_EXPRESSIBLE`) naming every type it cannot express.
 * @example
 * const schemas = await catalogJsonSchemas(events);
 * schemas["order.created"]; // { $schema, type: "object", properties: { ... }, examples: [...] }
 */
export async function catalogJsonSchemas(catalog: AnyEventCatalog): Promise<Record<string, JsonSchema>> {
  const issues: CatalogExportIssue[] = [];
  const schemas: Record<string, JsonSchema> = {};
  for (const type of catalog.types) {
    const definition = catalog.definitions[type]!;
    const schema = dataSchema(definition, type, issues);
    const examples = await exampleOutputs(catalog, type, definition, issues);
    if (schema === null || examples === null) continue;
    const { $schema: _dialect, ...body } = schema;
    schemas[type] = {
      $schema: DIALECT,
      title: type,
      description: definition.description,
      ...(definition.deprecated ? { deprecated: true } : {}),
      ...body,
      examples,
    };
  }
  if (issues.length > 0) throw new CatalogExportError(issues);
  return schemas;
}

/** What the published OpenAPI document says about the API it describes. */
export interface OpenApiOptions {
  /** The document's title, e.g. "Acme webhooks". */
  title: string;
  /** The version of the webhooks' contract (not Postel's), e.g. "2026-12-01" or "1.4.0". */
  version: string;
  /** A paragraph above the list (CommonMark), e.g. where to register an endpoint. */
  description?: string;
}

/**
 * An OpenAPI 3.1 document with a `webhooks` entry per declared type: the request body (the Standard
 * Webhooks envelope `{ type, timestamp, data }` with `data`'s JSON Schema from
 * {@link catalogJsonSchemas}), its examples, the `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` headers and how to verify them, the answer Postel expects, the type's group as
 * a tag and its deprecation. Serve it from a docs route or write it with `postel catalog export`.
 * @example
 * app.get("/docs/webhooks.json", async (_req, res) => {
 *   res.json(await catalogOpenApi(events, { title: "Acme webhooks", version: "2026-12-01" }));
 * });
 */
export async function catalogOpenApi(catalog: AnyEventCatalog, options: OpenApiOptions): Promise<JsonSchema> {
  const schemas = await catalogJsonSchemas(catalog);
  const webhooks: Record<string, JsonSchema> = {};
  const groups = new Set<string>();
  for (const type of catalog.types) {
    const definition = catalog.definitions[type]!;
    const { $schema: _dialect, title: _title, examples, ...data } = schemas[type]!;
    if (definition.group !== undefined) groups.add(definition.group);
    webhooks[type] = {
      post: {
        operationId: `webhook:${type}`,
        summary: definition.description,
        description:
          `Sent when ${JSON.stringify(type)} happens: ${definition.description}` +
          (typeof definition.deprecated === "string" ? `\n\nDeprecated: ${definition.deprecated}` : "") +
          `\n\n${VERIFY}`,
        ...(definition.group !== undefined ? { tags: [definition.group] } : {}),
        ...(definition.deprecated ? { deprecated: true } : {}),
        parameters: HEADERS,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: envelope(type, data),
              examples: Object.fromEntries(
                (examples as unknown[]).map((value, i) => [
                  `example${i + 1}`,
                  { value: { type, timestamp: EXAMPLE_TIMESTAMP, data: value } },
                ]),
              ),
            },
          },
        },
        responses: RESPONSES,
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: options.title,
      version: options.version,
      ...(options.description !== undefined ? { description: options.description } : {}),
    },
    jsonSchemaDialect: DIALECT,
    ...(groups.size > 0 ? { tags: [...groups].map((name) => ({ name })) } : {}),
    webhooks,
  };
}

function dataSchema(
  definition: EventDefinition,
  type: string,
  issues: CatalogExportIssue[],
): JsonSchema | null {
  if (definition.jsonSchema !== undefined) return definition.jsonSchema;
  const standard: Partial<StandardJSONSchemaV1.Props> = definition.schema["~standard"];
  const converter = standard.jsonSchema;
  if (converter === undefined) {
    const vendor = definition.schema["~standard"].vendor;
    issues.push({
      type,
      message:
        `its ${vendor} schema has no Standard JSON Schema converter: ` +
        (vendor === "valibot"
          ? "wrap it in toStandardJsonSchema() from @valibot/to-json-schema, "
          : "use a library version that implements it (zod 4.2+, arktype 2.1.28+), ") +
        "or give the definition a jsonSchema",
    });
    return null;
  }
  try {
    return converter.output({ target: "draft-2020-12" });
  } catch (error) {
    issues.push({
      type,
      message:
        `its schema cannot be expressed in JSON Schema (${error instanceof Error ? error.message : String(error)}); ` +
        "give the definition a jsonSchema describing what it outputs",
    });
    return null;
  }
}

/** The examples as receivers see them (the schema's output), or null when one fails its schema. */
async function exampleOutputs(
  catalog: AnyEventCatalog,
  type: string,
  definition: EventDefinition,
  issues: CatalogExportIssue[],
): Promise<unknown[] | null> {
  const outputs: unknown[] = [];
  for (const [i, example] of definition.examples.entries()) {
    try {
      outputs.push(await catalog.parse(type, example));
    } catch (error) {
      // Only an asynchronous schema gets here: defineEvents() checked the others' examples.
      issues.push({ type, message: `examples[${i}] fails its schema: ${(error as Error).message}` });
      return null;
    }
  }
  return outputs;
}

function envelope(type: string, data: JsonSchema): JsonSchema {
  return {
    type: "object",
    required: ["type", "timestamp", "data"],
    properties: {
      type: { const: type, description: "The event type." },
      timestamp: {
        type: "string",
        format: "date-time",
        description: "When the event was sent (ISO 8601, UTC); the same for every retry.",
      },
      data,
    },
  };
}

const EXAMPLE_TIMESTAMP = "2026-01-01T12:00:00.000Z";

const VERIFY =
  "Verify every request before trusting it ([Standard Webhooks](https://www.standardwebhooks.com/)): " +
  "sign the exact bytes received as `{webhook-id}.{webhook-timestamp}.{body}` with HMAC-SHA256, keyed by " +
  "the base64 part of your endpoint's `whsec_` secret, and compare the result in constant time with each " +
  "`v1,` signature in `webhook-signature` (several during a secret rotation); an Ed25519 endpoint key " +
  "signs with `v1a,` instead. Refuse a `webhook-timestamp` more than 5 minutes away from now, and treat a " +
  "`webhook-id` seen before as a retry of the same event.";

const HEADERS = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The message's unique id: the same on every retry, so use it to drop duplicates.",
    schema: { type: "string", examples: ["msg_2oGE0ZpCKf8aAXqA1cuqXSZfwYJ"] },
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "When this attempt was signed, in integer seconds since the Unix epoch.",
    schema: { type: "string", pattern: "^[0-9]+$", examples: ["1767268800"] },
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "Space-separated signatures of `{webhook-id}.{webhook-timestamp}.{body}`: `v1,<base64 HMAC-SHA256>` or `v1a,<base64 Ed25519>`.",
    schema: { type: "string", examples: ["v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="] },
  },
];

const RESPONSES = {
  "2XX": { description: "Received: any 2xx answer within the timeout acknowledges the delivery." },
  "4XX": {
    description:
      "Refused for good: the delivery is not retried, except 408 and 429, which are (after their `Retry-After`).",
  },
  default: {
    description:
      "A 5xx answer (a `Retry-After` on 503 is honoured), a redirect, a timeout or a network error: retried on the sender's schedule.",
  },
};
