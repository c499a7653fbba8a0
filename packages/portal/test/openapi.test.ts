import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, test } from "vitest";
import { API_ROUTES, portalOpenApi } from "../src/index.js";
import { responseChecker } from "./support/openapi-responses.js";

type Operation = {
  operationId: string;
  parameters: { name: string; in: string }[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
};

const document = portalOpenApi({ basePath: "/webhooks", title: "Acme webhooks", version: "2026-12-01" });
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({
    route: `${method.toUpperCase()} ${path.replace(/^\/api\//, "").replace(/\{[^}]+\}/g, ":id")}`,
    path,
    method,
    operation: operation as unknown as Operation,
  })),
);

describe("portalOpenApi()", () => {
  test("passes a real OpenAPI 3.1 validator, which fails a broken copy", async () => {
    const validator = new Validator();
    const result = await validator.validate(document as never);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    const broken = structuredClone(document);
    (broken.paths["/api/endpoints/{endpointId}"]!["get"]!["parameters"] as { in: string }[])[0]!.in = "body";
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
  });

  test("has one operation per route of the API, no more and no fewer", () => {
    expect(operations.map((o) => o.route).sort()).toEqual([...API_ROUTES].sort());
    const ids = operations.map((o) => o.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("names each id of a path, and lists every status the route can answer", () => {
    expect(Object.keys(document.paths)).toContain("/api/messages/{messageId}/deliveries/{deliveryId}/replay");
    for (const { route, path, method, operation } of operations) {
      const ids = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      expect(
        operation.parameters.filter((p) => p.in === "path").map((p) => p.name),
        route,
      ).toEqual(ids);
      const statuses = Object.keys(operation.responses);
      expect(statuses, route).toEqual(expect.arrayContaining(["200", "403", "500"]));
      expect(statuses.includes("404"), route).toBe(ids.length > 0);
      const write = method !== "get";
      expect(statuses.includes("400") && statuses.includes("413"), route).toBe(write);
      if (operation.requestBody !== undefined) expect(statuses, route).toContain("422");
    }
    const create = document.paths["/api/endpoints"]!["post"] as unknown as Operation;
    expect(Object.keys(create.responses)).toEqual(["200", "400", "403", "413", "422", "429", "500"]);
  });

  test("every response schema compiles under a strict JSON Schema 2020-12 validator, every $ref resolved", () => {
    expect(document.jsonSchemaDialect).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(responseChecker(document).compileAll()).toBeGreaterThan(API_ROUTES.length * 3);
  });

  test("is served below the base path, behind the app's own session or a portal link's", () => {
    expect(document.servers).toEqual([{ url: "/webhooks" }]);
    expect(document.info).toMatchObject({ title: "Acme webhooks", version: "2026-12-01" });
    expect(portalOpenApi().servers).toEqual([{ url: "/" }]);
    expect(document.security).toEqual([{ appSession: [] }, { portalSession: [] }]);
    const scheme = document.components.securitySchemes["appSession"];
    expect(scheme).toMatchObject({ type: "apiKey", in: "cookie", name: "session" });
    expect(scheme!["description"]).toContain("authenticate(request)");
    expect(portalOpenApi({ sessionCookie: "sid" }).components.securitySchemes["appSession"]).toMatchObject({
      name: "sid",
    });
    expect(document.components.securitySchemes["portalSession"]).toMatchObject({
      in: "cookie",
      name: "postel_portal_session",
    });
  });
});
