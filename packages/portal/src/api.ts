/**
 * The portal's JSON API: each route a thin translation of HTTP onto `TenantScope`, the same
 * implementation the pages use. Errors are `{ "error": { "code", "message" } }` with a status per
 * code; another tenant's id is a 404 like an unknown one.
 */
import { InvalidInputError, isPostelError, NotFoundError, type PostelError } from "@postel/core";
import { isCrossSite, readBodyText, type Responder } from "@postel/web-kit";
import { PortalLimitError, type TenantEndpointInput, type TenantScope } from "./scope.js";

/** The status of each kind of failure a tenant can cause; 0 for the server's own (a 500). */
export function statusOf(error: PostelError): number {
  if (error instanceof NotFoundError) return 404;
  if (error instanceof PortalLimitError) return 429;
  if (error instanceof InvalidInputError) return 422;
  return 0;
}

type Route = (
  scope: TenantScope,
  body: Record<string, unknown>,
  ids: string[],
  query: URLSearchParams,
) => Promise<unknown> | unknown;

/** `?cursor=` of a listing (the `nextCursor` of the page before). */
const cursorOf = (query: URLSearchParams) => ({ cursor: query.get("cursor") || undefined });

const ROUTES: Record<string, Route> = {
  "GET event-types": (scope) => ({ items: scope.eventTypes() }),
  "GET endpoints": (scope, _body, _ids, query) => scope.listEndpoints(cursorOf(query)),
  "POST endpoints": (scope, body) => scope.createEndpoint(endpointInput(body, true) as TenantEndpointInput),
  "GET endpoints/:id": (scope, _body, [id]) => scope.endpoint(id!),
  "PATCH endpoints/:id": (scope, body, [id]) => scope.updateEndpoint(id!, endpointInput(body, false)),
  "DELETE endpoints/:id": async (scope, _body, [id]) => {
    await scope.deleteEndpoint(id!);
    return { deleted: true };
  },
  "POST endpoints/:id/disable": (scope, _body, [id]) => scope.disableEndpoint(id!),
  "POST endpoints/:id/enable": (scope, _body, [id]) => scope.enableEndpoint(id!),
  "POST endpoints/:id/reveal-secret": async (scope, _body, [id]) => ({
    secret: await scope.revealSecret(id!),
  }),
  "POST endpoints/:id/rotate-secret": async (scope, body, [id]) => ({
    secret: await scope.rotateSecret(id!, text(body, "overlap") ?? "24h"),
  }),
  "POST endpoints/:id/test": (scope, body, [id]) => scope.sendTest(id!, text(body, "type") ?? ""),
  "POST endpoints/:id/recover": async (scope, body, [id]) => {
    const since = Date.parse(text(body, "since") ?? "");
    return body["dryRun"] === true
      ? { wouldReplay: await scope.recoverCount(id!, since) }
      : { replayed: await scope.recover(id!, since) };
  },
  "GET messages": (scope, _body, _ids, query) => scope.listMessages(cursorOf(query)),
  "GET messages/:id": (scope, _body, [id]) => scope.message(id!),
  "GET messages/:id/deliveries": (scope, _body, [id]) => scope.deliveries(id!),
  "POST messages/:id/deliveries/:id/replay": async (scope, _body, [id, delivery]) => ({
    replayed: await scope.replayDelivery(id!, delivery!),
  }),
  "GET activity": (scope, _body, _ids, query) => scope.activity(cursorOf(query)),
};

/** Every route of the API, as `METHOD path` with `:id` for ids (for tests and the OpenAPI document). */
export const API_ROUTES = Object.keys(ROUTES);

/** Serves `path` (below `/api/`) for the tenant of `scope`, or null when no route matches. */
export async function serveApi(
  request: Request,
  scope: TenantScope,
  path: string,
  responder: Responder,
): Promise<Response | null> {
  const segments = path.split("/");
  const ids: string[] = [];
  // Ids sit at the odd positions: endpoints/:id/test, messages/:id/deliveries/:id/replay.
  const shape = segments
    .map((segment, i) => {
      if (i % 2 === 0) return segment;
      ids.push(decode(segment));
      return ":id";
    })
    .join("/");
  const route = ROUTES[`${request.method === "HEAD" ? "GET" : request.method} ${shape}`];
  if (route === undefined) return null;
  let body: Record<string, unknown> = {};
  if (request.method !== "GET" && request.method !== "HEAD") {
    const refused = refuseCrossSite(request);
    if (refused !== null) return responder.json({ error: refused }, 403);
    const raw = await readBodyText(request);
    if (raw.trim() !== "") {
      try {
        const parsed: unknown = JSON.parse(raw);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error();
        body = parsed as Record<string, unknown>;
      } catch {
        return responder.json(
          { error: { code: "INVALID_JSON", message: "The body must be a JSON object." } },
          400,
        );
      }
    }
  }
  try {
    return responder.json((await route(scope, body, ids, new URL(request.url).searchParams)) ?? null);
  } catch (error) {
    const status = isPostelError(error) ? statusOf(error) : 0;
    if (status === 0 || !isPostelError(error)) throw error;
    return responder.json({ error: { code: error.code, message: error.message } }, status);
  }
}

/**
 * A write must say it is JSON (a form cannot, so a cross-site form post is refused), and a
 * browser's `Sec-Fetch-Site` and `Origin` must be this site's.
 */
function refuseCrossSite(request: Request): { code: string; message: string } | null {
  if (isCrossSite(request))
    return { code: "CROSS_SITE", message: "Writes are accepted only from this site." };
  if (!/^application\/json\s*(;|$)/i.test(request.headers.get("content-type") ?? ""))
    return { code: "JSON_REQUIRED", message: "Send writes as JSON (Content-Type: application/json)." };
  return null;
}

function endpointInput(body: Record<string, unknown>, create: boolean): Partial<TenantEndpointInput> {
  const input: Partial<TenantEndpointInput> = {};
  if (create || body["url"] !== undefined) input.url = body["url"] as string;
  if (body["types"] !== undefined) input.types = body["types"] as string[];
  if (body["filter"] !== undefined) input.filter = body["filter"] as TenantEndpointInput["filter"] & object;
  if (body["description"] !== undefined) input.description = body["description"] as string;
  return input;
}

function text(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  return typeof value === "string" ? value : undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return "";
  }
}
