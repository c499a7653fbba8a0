import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { postel } from "./support/cli.js";

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

describe("postel catalog export", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "postel-cli-catalog-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  test("prints an OpenAPI 3.1 document with a webhook per type, no database needed", async () => {
    const run = await postel(undefined, [
      "catalog",
      "export",
      fixture("events.mjs"),
      "--title",
      "Acme webhooks",
      "--api-version",
      "2026-12-01",
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const document = JSON.parse(run.stdout) as {
      openapi: string;
      info: { title: string; version: string };
      webhooks: Record<string, { post: { deprecated?: boolean; tags?: string[] } }>;
    };
    expect(document.openapi).toBe("3.1.0");
    expect(document.info).toEqual({ title: "Acme webhooks", version: "2026-12-01" });
    expect(Object.keys(document.webhooks)).toEqual(["order.created", "order.cancelled"]);
    expect(document.webhooks["order.cancelled"]!.post.deprecated).toBe(true);
    expect(document.webhooks["order.created"]!.post.tags).toEqual(["orders"]);
  });

  test("--format json-schema --out writes one schema per type to the file", async () => {
    const file = join(dir, "schemas.json");
    const run = await postel(undefined, [
      "catalog",
      "export",
      fixture("events.mjs"),
      "--format",
      "json-schema",
      "--out",
      file,
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`Wrote 2 event types to ${file} (json-schema).`);
    const schemas = JSON.parse(await readFile(file, "utf8")) as Record<string, Record<string, unknown>>;
    expect(schemas["order.created"]).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      title: "order.created",
      description: "An order was placed.",
      type: "object",
      examples: [{ id: "ord_1", total: 12.5 }],
    });
  });

  test.each([
    [["--format", "yaml"], "USAGE: --format must be openapi or json-schema"],
    [["--export", "notACatalog"], 'has no export "notACatalog" made by defineEvents()'],
  ])("%j is a usage error (exit 2)", async (flags, message) => {
    const run = await postel(undefined, ["catalog", "export", fixture("events.mjs"), ...flags]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe("");
  });

  test("a module with several catalogs needs --export; one that cannot be expressed is named", async () => {
    const several = await postel(undefined, ["catalog", "export", fixture("two-catalogs.mjs")]);
    expect(several.code).toBe(2);
    expect(several.stderr).toContain("exports several catalogs (events, more): choose one with --export");
    const chosen = await postel(undefined, [
      "catalog",
      "export",
      fixture("two-catalogs.mjs"),
      "--export",
      "events",
    ]);
    expect(chosen.code).toBe(0);
    const unexpressible = await postel(undefined, [
      "catalog",
      "export",
      fixture("two-catalogs.mjs"),
      "--export",
      "more",
    ]);
    expect(unexpressible.code).toBe(2);
    expect(unexpressible.stderr).toContain("postel: EVENT_SCHEMA_NOT_EXPRESSIBLE:");
    expect(unexpressible.stderr).toContain(
      '"user.created": its fixture schema has no Standard JSON Schema converter',
    );
  });

  test("a module that does not load says how to fix it", async () => {
    const run = await postel(undefined, ["catalog", "export", join(dir, "missing.js")]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Could not load .*missing\.js.*build TypeScript first/);
  });
});
