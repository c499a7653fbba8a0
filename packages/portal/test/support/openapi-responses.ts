import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { OpenAPIObject } from "../../src/openapi.js";

type Json = { [key: string]: unknown };

/** What an answer was checked against: the route it matched (as `API_ROUTES` names it), and the problems found. */
export interface ResponseCheck {
  route: string;
  problems: string[];
}

/**
 * Checks answers against `document`: the status must be documented for the operation, its
 * content type too, and a JSON body must pass that response's schema under a strict draft 2020-12
 * validator, with every object closed (`unevaluatedProperties: false`), so a field the API sends
 * and the document does not describe is a problem too.
 */
export function responseChecker(document: OpenAPIObject) {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats.default(ajv);
  const absolute = (value: unknown) =>
    JSON.parse(
      JSON.stringify(value).replaceAll(
        '"#/components/schemas/',
        '"https://postel.test/portal-api.json#/$defs/',
      ),
    ) as Json;
  ajv.addSchema({
    $id: "https://postel.test/portal-api.json",
    $defs: closed(absolute(document.components.schemas)),
  });
  const compiled = new Map<string, ValidateFunction>();
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
      route: `${method.toUpperCase()} ${path.slice("/api/".length).replace(/\{[^}]+\}/g, ":id")}`,
      responses: operation["responses"] as Record<string, Json>,
    })),
  );
  const responseOf = (answer: Json): Json => {
    const target = answer["$ref"];
    if (typeof target !== "string") return answer;
    return document.components.responses[target.replace("#/components/responses/", "")] as Json;
  };
  return {
    /** Every component schema and every response schema, compiled (it throws on an unresolved `$ref`). */
    compileAll(): number {
      let count = 0;
      for (const name of Object.keys(document.components.schemas)) {
        validatorOf(name, { $ref: `#/components/schemas/${name}` });
        count++;
      }
      for (const { route, responses } of operations)
        for (const [status, answer] of Object.entries(responses))
          for (const [type, media] of Object.entries(responseOf(answer)["content"] as Record<string, Json>)) {
            validatorOf(`${route} ${status} ${type}`, media["schema"]);
            count++;
          }
      return count;
    },
    /** Checks one answer to `method` `pathname` (below the portal's base path, e.g. `/api/endpoints`). */
    check(
      method: string,
      pathname: string,
      status: number,
      contentType: string,
      body: string,
    ): ResponseCheck {
      const operation = operations.find((o) => o.method === method && o.pattern.test(pathname));
      if (operation === undefined) return { route: "", problems: [`no operation for ${method} ${pathname}`] };
      const answer = operation.responses[String(status)];
      if (answer === undefined)
        return { route: operation.route, problems: [`status ${status} is not documented`] };
      const type = contentType.split(";")[0]!.trim();
      const media = (responseOf(answer)["content"] as Record<string, Json>)[type];
      if (media === undefined)
        return { route: operation.route, problems: [`${status} ${type} is not documented`] };
      const validate = validatorOf(`${operation.route} ${status} ${type}`, media["schema"]);
      const valid = validate(type === "application/json" ? JSON.parse(body) : body);
      return {
        route: operation.route,
        problems: valid ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`),
      };
    },
  };

  function validatorOf(key: string, schema: unknown): ValidateFunction {
    let validate = compiled.get(key);
    if (validate === undefined) {
      validate = ajv.compile(absolute(schema));
      compiled.set(key, validate);
    }
    return validate;
  }
}

/** `schema` with every object that lists its properties closed to any other. */
function closed(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map(closed) as never;
  if (typeof schema !== "object" || schema === null) return schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) out[key] = key === "const" ? value : closed(value);
  if (out["properties"] !== undefined) out["unevaluatedProperties"] = false;
  return out;
}
