import { Validator } from "@seriousme/openapi-schema-validator";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { type } from "arktype";
import * as v from "valibot";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { CatalogExportError, catalogJsonSchemas, catalogOpenApi } from "../src/outbound/catalog-export.js";
import { defineEvents } from "../src/outbound/catalog.js";

// One catalog in the three libraries, each through its Standard JSON Schema converter.
const events = defineEvents({
  "order.created": {
    schema: toStandardJsonSchema(
      v.object({
        id: v.string(),
        total: v.pipe(v.number(), v.minValue(0)),
        currency: v.picklist(["EUR", "USD"]),
        lines: v.array(v.object({ sku: v.string(), quantity: v.pipe(v.number(), v.integer()) })),
        note: v.optional(v.string()),
      }),
    ),
    description: "An order was placed and paid for.",
    examples: [
      { id: "ord_1", total: 12.5, currency: "EUR", lines: [{ sku: "TEA-1", quantity: 2 }] },
      { id: "ord_2", total: 0, currency: "USD", lines: [], note: "free sample" },
    ],
    group: "orders",
  },
  "order.refunded": {
    schema: z.object({ id: z.string(), amount: z.number().positive(), at: z.iso.datetime() }),
    description: "Some or all of an order's total went back to the customer.",
    examples: [{ id: "ord_1", amount: 2, at: "2026-12-01T10:00:00Z" }],
    group: "orders",
  },
  "customer.updated": {
    schema: type({ id: "string", email: "string.email", "name?": "string" }),
    description: "A customer changed their details.",
    examples: [{ id: "cus_1", email: "a@example.com" }],
    deprecated: "use customer.changed",
  },
  "customer:changed/v2": {
    // A schema whose output differs from its input: the published schema and examples are the
    // output, what receivers get.
    schema: z.object({ id: z.string(), email: z.string().transform((s) => s.toLowerCase()) }),
    description: "A customer changed their details (v2).",
    examples: [{ id: "cus_1", email: "A@Example.com" }],
    jsonSchema: {
      type: "object",
      required: ["id", "email"],
      properties: { id: { type: "string" }, email: { type: "string", pattern: "^[^A-Z]*$" } },
    },
  },
});

function ajv() {
  const instance = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  addFormats.default(instance);
  return instance;
}

describe("catalogJsonSchemas()", () => {
  test("a draft 2020-12 schema per type that a real validator compiles, and every example passes it", async () => {
    const schemas = await catalogJsonSchemas(events);
    expect(Object.keys(schemas)).toEqual(events.types);
    const validator = ajv();
    for (const [type, schema] of Object.entries(schemas)) {
      expect(schema["$schema"]).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(schema["title"]).toBe(type);
      const validate = validator.compile(schema);
      const examples = schema["examples"] as unknown[];
      expect(examples.length).toBeGreaterThan(0);
      for (const example of examples) {
        expect(validate(example), `${type}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  test("the schemas hold the rules: data a schema refuses, the JSON Schema refuses too", async () => {
    const schemas = await catalogJsonSchemas(events);
    const validator = ajv();
    const order = validator.compile(schemas["order.created"]!);
    expect(order({ id: "ord_1", total: -1, currency: "EUR", lines: [] })).toBe(false);
    expect(order({ id: "ord_1", total: 1, currency: "GBP", lines: [] })).toBe(false);
    expect(order({ id: "ord_1", total: 1, currency: "EUR", lines: [{ sku: "A", quantity: 1.5 }] })).toBe(
      false,
    );
    const refund = validator.compile(schemas["order.refunded"]!);
    expect(refund({ id: "ord_1", amount: 2, at: "yesterday" })).toBe(false);
    const customer = validator.compile(schemas["customer.updated"]!);
    expect(customer({ id: "cus_1", email: "not an email" })).toBe(false);
  });

  test("description and deprecation are published; examples are the schema's output", async () => {
    const schemas = await catalogJsonSchemas(events);
    expect(schemas["order.created"]).toMatchObject({
      description: "An order was placed and paid for.",
      type: "object",
    });
    expect(schemas["order.created"]!["deprecated"]).toBeUndefined();
    expect(schemas["customer.updated"]!["deprecated"]).toBe(true);
    // The given jsonSchema, and the transformed example (lower-cased), which passes it.
    expect(schemas["customer:changed/v2"]!["examples"]).toEqual([{ id: "cus_1", email: "a@example.com" }]);
    expect(schemas["customer:changed/v2"]!["properties"]).toEqual({
      id: { type: "string" },
      email: { type: "string", pattern: "^[^A-Z]*$" },
    });
  });

  test("a schema its library cannot express, or one without a converter, is named with the fix", async () => {
    const catalog = defineEvents({
      "order.created": {
        schema: z.object({ id: z.string().transform((s) => s.length) }),
        description: "An order was placed.",
        examples: [{ id: "ord_1" }],
      },
      "order.paid": {
        schema: v.object({ id: v.string() }),
        description: "An order was paid for.",
        examples: [{ id: "ord_1" }],
      },
      "order.shipped": {
        schema: z.object({ id: z.string() }),
        description: "An order left the warehouse.",
        examples: [{ id: "ord_1" }],
      },
    });
    const error = await catalogJsonSchemas(catalog).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogExportError);
    const exported = error as CatalogExportError;
    expect(exported.code).toBe("EVENT_SCHEMA_NOT_EXPRESSIBLE");
    expect(exported.issues.map((issue) => issue.type)).toEqual(["order.created", "order.paid"]);
    expect(exported.issues[0]!.message).toMatch(
      /cannot be expressed in JSON Schema .*give the definition a jsonSchema/,
    );
    expect(exported.issues[1]!.message).toMatch(/toStandardJsonSchema\(\) from @valibot\/to-json-schema/);
    expect(exported.message).toContain('"order.paid"');
  });

  test("an asynchronous schema's example that fails is refused at export", async () => {
    const catalog = defineEvents({
      "customer.changed": {
        // No converter needed: the definition gives its jsonSchema.
        schema: v.pipeAsync(
          v.object({ id: v.string() }),
          v.checkAsync(async (input) => input.id.startsWith("cus_"), "must be a customer id"),
        ),
        description: "A customer changed their details.",
        examples: [{ id: "ord_1" }],
        jsonSchema: { type: "object", properties: { id: { type: "string" } } },
      },
    });
    const error = (await catalogJsonSchemas(catalog).catch((e: unknown) => e)) as CatalogExportError;
    expect(error.code).toBe("EVENT_SCHEMA_NOT_EXPRESSIBLE");
    expect(error.issues[0]!.message).toMatch(/examples\[0\] fails its schema.*must be a customer id/s);
  });
});

test("defineEvents() refuses a jsonSchema that is not an object", () => {
  expect(() =>
    defineEvents({
      "order.created": {
        schema: v.object({ id: v.string() }),
        description: "An order was placed.",
        examples: [{ id: "ord_1" }],
        jsonSchema: [] as unknown as Record<string, unknown>,
      },
    }),
  ).toThrow(/"order.created".jsonSchema: must be a JSON Schema object/);
});

describe("catalogOpenApi()", () => {
  const options = {
    title: "Acme webhooks",
    version: "2026-12-01",
    description: "Register endpoints in the portal.",
  };

  test("passes a real OpenAPI 3.1 validator", async () => {
    const document = await catalogOpenApi(events, options);
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    // The validator is not a rubber stamp: a header parameter in the wrong place fails it.
    const broken = JSON.parse(JSON.stringify(document)) as typeof document & {
      webhooks: Record<string, { post: { parameters: { in: string }[] } }>;
    };
    broken.webhooks["order.created"]!.post.parameters[0]!.in = "body";
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  test("a webhook per type: envelope, headers, examples that pass the body schema, tags, deprecation", async () => {
    const document = (await catalogOpenApi(events, options)) as {
      info: unknown;
      tags: { name: string }[];
      webhooks: Record<string, { post: Record<string, unknown> }>;
    };
    expect(document.info).toEqual({
      title: "Acme webhooks",
      version: "2026-12-01",
      description: options.description,
    });
    expect(Object.keys(document.webhooks)).toEqual(events.types);
    expect(document.tags).toEqual([{ name: "orders" }]);
    const validator = ajv();
    for (const type of events.types) {
      const post = document.webhooks[type]!.post as {
        summary: string;
        description: string;
        parameters: { name: string; in: string; required: boolean }[];
        requestBody: {
          content: { "application/json": { schema: object; examples: Record<string, { value: unknown }> } };
        };
        deprecated?: boolean;
        tags?: string[];
      };
      expect(post.summary).toBe(events.definitions[type]!.description);
      expect(post.description).toContain("HMAC-SHA256");
      expect(post.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
        ["webhook-id", "header", true],
        ["webhook-timestamp", "header", true],
        ["webhook-signature", "header", true],
      ]);
      const body = post.requestBody.content["application/json"];
      const validate = validator.compile(body.schema);
      const examples = Object.values(body.examples);
      expect(examples.length).toBe(events.definitions[type]!.examples.length);
      for (const { value } of examples) {
        expect(validate(value), `${type}: ${JSON.stringify(validate.errors)}`).toBe(true);
        expect((value as { type: string }).type).toBe(type);
      }
      // The envelope pins the type: another type's body does not pass.
      expect(validate({ type: "other.type", timestamp: "2026-01-01T00:00:00Z", data: {} })).toBe(false);
    }
    expect(document.webhooks["customer.updated"]!.post["deprecated"]).toBe(true);
    expect(document.webhooks["customer.updated"]!.post["description"]).toContain(
      "Deprecated: use customer.changed",
    );
    expect(document.webhooks["order.created"]!.post["deprecated"]).toBeUndefined();
    expect(document.webhooks["order.created"]!.post["tags"]).toEqual(["orders"]);
  });

  test("the document is plain JSON: it survives a round trip unchanged", async () => {
    const document = await catalogOpenApi(events, options);
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
  });
});
