import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type AnyEventCatalog, catalogJsonSchemas, catalogOpenApi, isEventCatalog } from "@postel/core";
import type { Args } from "../args.js";
import type { Command } from "../command.js";
import { usageError } from "../exit-codes.js";

const FORMATS = ["openapi", "json-schema"] as const;

const exportCatalog: Command = {
  name: "catalog export",
  summary: "Write the event catalog as an OpenAPI 3.1 document or JSON Schemas",
  operands: ["<module>"],
  options: {
    format: { type: "string", value: "<format>", description: "openapi (default) or json-schema" },
    export: {
      type: "string",
      value: "<name>",
      description: "the module's export holding the catalog (default: its only defineEvents() export)",
    },
    title: {
      type: "string",
      value: "<text>",
      description: 'the OpenAPI document\'s title (default "Webhooks")',
    },
    "api-version": {
      type: "string",
      value: "<version>",
      description: "the webhooks' contract version in the OpenAPI document (default 1.0.0)",
    },
    description: { type: "string", value: "<text>", description: "a paragraph atop the OpenAPI document" },
    out: { type: "string", value: "<file>", description: "write to this file instead of stdout" },
  },
  details: [
    "<module> is a JavaScript module of your app (built, or run `node --import tsx` for TypeScript)",
    "that exports the catalog made by defineEvents(). Nothing connects to a database.",
    "openapi: a document with a `webhooks` entry per type (body schema, examples, signature headers).",
    "json-schema: { <type>: draft 2020-12 JSON Schema of its data, with description and examples }.",
    "Example: postel catalog export dist/events.js --title 'Acme webhooks' --out webhooks.json",
  ],
  async run({ args, out }) {
    args.expectPositionals(1);
    const format = args.string("format") ?? "openapi";
    if (!(FORMATS as readonly string[]).includes(format)) {
      throw usageError(`--format must be ${FORMATS.join(" or ")}, got ${JSON.stringify(format)}`);
    }
    const catalog = await loadCatalog(args.positional(0, "module"), args.string("export"));
    const document =
      format === "openapi"
        ? await catalogOpenApi(catalog, {
            title: args.string("title") ?? "Webhooks",
            version: args.string("api-version") ?? "1.0.0",
            ...(args.string("description") !== undefined ? { description: args.string("description")! } : {}),
          })
        : await catalogJsonSchemas(catalog);
    const file = args.string("out");
    if (file === undefined) return out.data(document);
    await writeFile(file, `${JSON.stringify(document, null, 2)}\n`);
    out.note(`Wrote ${catalog.types.length} event types to ${file} (${format}).`);
  },
};

/** The catalog `module` exports: `name`, or its only export made by defineEvents(). */
export async function loadCatalog(module: string, name: string | undefined): Promise<AnyEventCatalog> {
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(resolve(module)).href)) as Record<string, unknown>;
  } catch (error) {
    throw usageError(
      `Could not load ${module}: ${error instanceof Error ? error.message : String(error)}. ` +
        "Give the path of a JavaScript module (build TypeScript first, or run postel with `node --import tsx`).",
    );
  }
  if (name !== undefined) {
    if (!isEventCatalog(exports[name])) {
      throw usageError(`${module} has no export ${JSON.stringify(name)} made by defineEvents()`);
    }
    return exports[name] as AnyEventCatalog;
  }
  const found = Object.entries(exports).filter(([, value]) => isEventCatalog(value));
  if (found.length === 1) return found[0]![1] as AnyEventCatalog;
  throw usageError(
    found.length === 0
      ? `${module} exports no catalog made by defineEvents() (exports: ${Object.keys(exports).join(", ") || "none"})`
      : `${module} exports several catalogs (${found.map(([key]) => key).join(", ")}): choose one with --export`,
  );
}

/** Reads `--catalog <module>` (with `--catalog-export`), or undefined when it is not given. */
export async function catalogOption(args: Args): Promise<AnyEventCatalog | undefined> {
  const module = args.string("catalog");
  return module === undefined ? undefined : loadCatalog(module, args.string("catalog-export"));
}

/** `catalog export`. */
export const catalogCommands: Command[] = [exportCatalog];
