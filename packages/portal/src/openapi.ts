/**
 * The OpenAPI 3.1 document of the portal's JSON API, built from its operations
 * (`internal/api-operations.ts`, keyed like `API_ROUTES`) over its component schemas
 * (`internal/api-schemas.ts`).
 */
import { type ExtraStatus, OPERATIONS } from "./internal/api-operations.js";
import { API_SCHEMAS, type JsonSchema, ref } from "./internal/api-schemas.js";
import { SESSION_COOKIE } from "./session.js";

/** The OpenAPI 3.1 document `portalOpenApi` returns (its shape, loosely: it is JSON). */
export interface OpenAPIObject {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  jsonSchemaDialect: string;
  servers: { url: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  /** Path (below the server URL, e.g. `/api/endpoints/{endpointId}`) → method → operation. */
  paths: Record<string, Record<string, JsonSchema>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
}

/** Options of `portalOpenApi`. */
export interface PortalOpenApiOptions {
  /** The path the portal is mounted at, as given to `createPortal`. Default `"/"`. */
  basePath?: string | undefined;
  /** The document's title. Default `"Webhooks portal API"`. */
  title?: string | undefined;
  /** The version of your API's contract. Default `"1"`. */
  version?: string | undefined;
  /** The name of your app's session cookie, for the security scheme. Default `"session"`. */
  sessionCookie?: string | undefined;
}

const json = (schema: JsonSchema) => ({ "application/json": { schema } });
const text = { "text/plain": { schema: { type: "string" } } };
const errorBody = json(ref("Error"));
const answer = (description: string, content: JsonSchema) => ({ description, content });

const RESPONSES = {
  InvalidJson: answer("`INVALID_JSON`: the body is not a JSON object.", errorBody),
  Refused: answer("No session: `authenticate()` refused the caller, and no portal link's session.", text),
  WriteRefused: answer(
    "`CROSS_SITE` (the browser says another site sent it) or `JSON_REQUIRED` (no `Content-Type: " +
      "application/json`) as JSON; or, as plain text, no session.",
    { ...errorBody, ...text },
  ),
  NotFound: answer("`*_NOT_FOUND`: no such id for this tenant (another tenant's id included).", errorBody),
  TooLarge: answer("The body is over the size limit.", text),
  Invalid: answer("The input was refused; the code and message say why and what to send.", errorBody),
  LimitReached: answer("`PORTAL_LIMIT_REACHED`: a limit the app set for each tenant.", errorBody),
  Failed: answer("The server failed; the app's `onError` was told why.", text),
};

const STATUS_RESPONSE: Record<ExtraStatus, keyof typeof RESPONSES> = { 422: "Invalid", 429: "LimitReached" };

/**
 * The OpenAPI 3.1 document of the portal's JSON API (`<basePath>/api/`): one operation per route,
 * each with its parameters, body, answer and every error status it can give, over JSON Schema
 * 2020-12 component schemas. Serve it to the apps that build their own UI on the API.
 * @example
 * app.get("/webhooks/openapi.json", (_req, res) => res.json(portalOpenApi({ basePath: "/webhooks" })));
 */
export function portalOpenApi(options: PortalOpenApiOptions = {}): OpenAPIObject {
  const paths: OpenAPIObject["paths"] = {};
  for (const [route, operation] of Object.entries(OPERATIONS)) {
    const [method, shape] = route.split(" ") as [string, string];
    const { path, ids } = pathOf(shape);
    const write = method !== "GET";
    const responses: Record<string, JsonSchema> = {
      200: answer(operation.summary, json(operation.ok)),
      ...(write ? { 400: refTo("InvalidJson") } : {}),
      403: refTo(write ? "WriteRefused" : "Refused"),
      ...(ids.length > 0 ? { 404: refTo("NotFound") } : {}),
      ...(write ? { 413: refTo("TooLarge") } : {}),
      ...Object.fromEntries(
        (operation.errors ?? []).map((status) => [status, refTo(STATUS_RESPONSE[status])]),
      ),
      500: refTo("Failed"),
    };
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = {
      operationId: operation.operationId,
      summary: operation.summary,
      tags: [operation.tag],
      parameters: [
        ...ids.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
        ...(operation.paged
          ? [
              {
                name: "cursor",
                in: "query",
                required: false,
                description: "The `nextCursor` of the previous page; omit for the first page.",
                schema: { type: "string" },
              },
            ]
          : []),
      ],
      ...(operation.body
        ? {
            requestBody: {
              required: operation.body.required ?? false,
              content: json(ref(operation.body.schema)),
            },
          }
        : {}),
      responses,
    };
  }
  const basePath = (options.basePath ?? "/").replace(/\/+$/, "");
  return {
    openapi: "3.1.0",
    info: {
      title: options.title ?? "Webhooks portal API",
      version: options.version ?? "1",
      description:
        "Your webhook endpoints, their secrets, and the messages sent to them, with each delivery's " +
        "attempts. Every answer is scoped to your account. Errors are `{ error: { code, message } }`; " +
        "writes must be JSON (`Content-Type: application/json`) from this site.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    servers: [{ url: basePath === "" ? "/" : basePath }],
    security: [{ appSession: [] }, { portalSession: [] }],
    tags: [
      { name: "endpoints", description: "Where your webhooks are sent, and their signing secrets." },
      { name: "messages", description: "What was sent, its deliveries and their attempts." },
      { name: "activity", description: "Who did what in the portal, and when." },
    ],
    paths,
    components: {
      schemas: API_SCHEMAS,
      responses: RESPONSES,
      securitySchemes: {
        appSession: {
          type: "apiKey",
          in: "cookie",
          name: options.sessionCookie ?? "session",
          description:
            "The app's own session: the portal calls the app's `authenticate(request)` on every request, " +
            "and it decides the tenant (or refuses).",
        },
        portalSession: {
          type: "apiKey",
          in: "cookie",
          name: SESSION_COOKIE,
          description:
            "The session a signed portal link opens (when the portal has a `secret`): the link names " +
            "the tenant, and the session lasts `sessionTtl`.",
        },
      },
    },
  };
}

/** `endpoints/:id` → `/api/endpoints/{endpointId}`: each id named for the collection before it. */
function pathOf(shape: string): { path: string; ids: string[] } {
  const ids: string[] = [];
  const segments = shape.split("/").map((segment, i, all) => {
    if (segment !== ":id") return segment;
    const collection = all[i - 1] ?? "item";
    const name = `${collection.replace(/ies$/, "y").replace(/s$/, "")}Id`.replace(/-(\w)/g, (_, c: string) =>
      c.toUpperCase(),
    );
    ids.push(name);
    return `{${name}}`;
  });
  return { path: `/api/${segments.join("/")}`, ids };
}

function refTo(name: keyof typeof RESPONSES): JsonSchema {
  return { $ref: `#/components/responses/${name}` };
}
