/**
 * `@postel/portal/client`: a typed fetch client of the portal's JSON API, one method per route of
 * the OpenAPI document (`portalOpenApi`). It imports nothing and runs wherever `fetch` does: a
 * browser on your own pages (your session cookie goes along), a server, a test.
 */
import type {
  PortalAuditEntry,
  PortalDuration,
  PortalEndpoint,
  PortalEndpointInput,
  PortalEndpointPatch,
  PortalEventType,
  PortalMessage,
  PortalPage,
  PortalTenantDelivery,
  PortalTime,
} from "./api-types.js";

export type {
  PortalAttempt,
  PortalAuditEntry,
  PortalDelivery,
  PortalDuration,
  PortalEndpoint,
  PortalEndpointInput,
  PortalEndpointPatch,
  PortalEventType,
  PortalMessage,
  PortalPage,
  PortalTenantDelivery,
  PortalTime,
} from "./api-types.js";

/** Options of `createPortalClient`. */
export interface PortalClientOptions {
  /** Where the portal is mounted: `"https://app.example.com/webhooks"`, or `"/webhooks"` in a browser. */
  baseUrl: string;
  /** The fetch to call. Default the global `fetch`. */
  fetch?: ((url: string, init: RequestInit) => Promise<Response>) | undefined;
  /** Headers sent with every request, or a function that returns them (e.g. a fresh auth header). */
  headers?:
    | Record<string, string>
    | (() => Record<string, string> | Promise<Record<string, string>>)
    | undefined;
}

/** The API's routes, as methods. Each answers the route's JSON, or throws `PortalApiError`. */
export interface PortalClient {
  eventTypes: {
    /** The app's catalog: what an endpoint can subscribe to and a test can send. */
    list(): Promise<{ items: PortalEventType[] }>;
  };
  endpoints: {
    list(options?: { cursor?: string | undefined }): Promise<PortalPage<PortalEndpoint>>;
    get(id: string): Promise<PortalEndpoint>;
    create(input: PortalEndpointInput): Promise<PortalEndpoint>;
    update(id: string, patch: PortalEndpointPatch): Promise<PortalEndpoint>;
    delete(id: string): Promise<{ deleted: true }>;
    /** Holds deliveries until the endpoint is enabled again. */
    disable(id: string): Promise<PortalEndpoint>;
    enable(id: string): Promise<PortalEndpoint>;
    revealSecret(id: string): Promise<{ secret: string }>;
    /** A new secret; the old one keeps signing beside it for `overlap` (default `"24h"`). */
    rotateSecret(id: string, options?: { overlap?: PortalDuration | undefined }): Promise<{ secret: string }>;
    /** Sends the catalog's first example of `type` to this endpoint only. */
    sendTest(id: string, event: { type: string }): Promise<{ messageId: string }>;
    /** Counts the failed and dead-lettered deliveries of messages since `since` that a recover sends again. */
    recover(id: string, options: { since: PortalTime; dryRun: true }): Promise<{ wouldReplay: number }>;
    /** Sends again the failed and dead-lettered deliveries of the endpoint's messages since `since`. */
    recover(
      id: string,
      options: { since: PortalTime; dryRun?: false | undefined },
    ): Promise<{ replayed: number }>;
  };
  messages: {
    list(options?: { cursor?: string | undefined }): Promise<PortalPage<PortalMessage>>;
    get(id: string): Promise<PortalMessage>;
    /** The message's deliveries to the tenant's endpoints, each with its attempts. */
    deliveries(id: string): Promise<PortalTenantDelivery[]>;
    replayDelivery(messageId: string, deliveryId: string): Promise<{ replayed: number }>;
  };
  activity: {
    /** What was done in the tenant's portal, newest first. */
    list(options?: { cursor?: string | undefined }): Promise<PortalPage<PortalAuditEntry>>;
  };
}

const BRAND = Symbol.for("postel.error");

/**
 * The API refused a request: its HTTP `status`, and the `code` and `message` of its
 * `{ error: { code, message } }` body. A refusal without that body (a plain 403 when your
 * `authenticate()` refused, a 500) has code `HTTP_<status>`; a 2xx that is not JSON (a login page
 * after a redirect) has code `UNEXPECTED_RESPONSE`. `isPostelError()` recognises it.
 */
export class PortalApiError extends Error {
  /** The HTTP status of the answer. */
  readonly status: number;
  /** Stable and machine-readable, e.g. `ENDPOINT_NOT_FOUND`. */
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "PortalApiError";
    this.status = status;
    this.code = code;
    // The registered brand of every Postel error, set by hand: extending PostelError would pull
    // @postel/core into every browser bundle of this client.
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * A client of the portal's JSON API at `baseUrl`. Ids are URL-encoded; writes are sent as JSON.
 * @example
 * const portal = createPortalClient({ baseUrl: "/webhooks" });
 * const endpoint = await portal.endpoints.create({ url: "https://example.com/hook", types: ["order.*"] });
 * const { secret } = await portal.endpoints.revealSecret(endpoint.id);
 */
export function createPortalClient(options: PortalClientOptions): PortalClient {
  const api = `${options.baseUrl.replace(/\/+$/, "")}/api/`;
  const send = options.fetch ?? ((url, init) => fetch(url, init));
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const extra = typeof options.headers === "function" ? await options.headers() : options.headers;
    const headers: Record<string, string> = { ...extra, accept: "application/json" };
    // The API refuses any write that does not say it is JSON, a bodiless DELETE included.
    if (method !== "GET") headers["content-type"] = "application/json";
    const response = await send(`${api}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed = /^application\/json\s*(;|$)/i.test(response.headers.get("content-type") ?? "")
      ? parseJson(text)
      : undefined;
    if (!response.ok) throw refusal(response.status, parsed, text);
    if (parsed === undefined)
      throw new PortalApiError(
        response.status,
        "UNEXPECTED_RESPONSE",
        `${method} ${path} answered ${response.status} without JSON: is baseUrl the portal's mount path?`,
      );
    return parsed as T;
  };
  const id = encodeURIComponent;
  const cursor = (options: { cursor?: string | undefined } = {}) =>
    options.cursor === undefined ? "" : `?cursor=${encodeURIComponent(options.cursor)}`;
  return {
    eventTypes: { list: () => call("GET", "event-types") },
    endpoints: {
      list: (options) => call("GET", `endpoints${cursor(options)}`),
      get: (endpointId) => call("GET", `endpoints/${id(endpointId)}`),
      create: (input) => call("POST", "endpoints", input),
      update: (endpointId, patch) => call("PATCH", `endpoints/${id(endpointId)}`, patch),
      delete: (endpointId) => call("DELETE", `endpoints/${id(endpointId)}`),
      disable: (endpointId) => call("POST", `endpoints/${id(endpointId)}/disable`),
      enable: (endpointId) => call("POST", `endpoints/${id(endpointId)}/enable`),
      revealSecret: (endpointId) => call("POST", `endpoints/${id(endpointId)}/reveal-secret`),
      rotateSecret: (endpointId, rotation = {}) =>
        call("POST", `endpoints/${id(endpointId)}/rotate-secret`, rotation),
      sendTest: (endpointId, event) => call("POST", `endpoints/${id(endpointId)}/test`, event),
      recover: ((endpointId: string, recovery: { since: PortalTime; dryRun?: boolean | undefined }) =>
        call("POST", `endpoints/${id(endpointId)}/recover`, {
          since: isoTime(recovery.since),
          dryRun: recovery.dryRun === true,
        })) as PortalClient["endpoints"]["recover"],
    },
    messages: {
      list: (options) => call("GET", `messages${cursor(options)}`),
      get: (messageId) => call("GET", `messages/${id(messageId)}`),
      deliveries: (messageId) => call("GET", `messages/${id(messageId)}/deliveries`),
      replayDelivery: (messageId, deliveryId) =>
        call("POST", `messages/${id(messageId)}/deliveries/${id(deliveryId)}/replay`),
    },
    activity: { list: (options) => call("GET", `activity${cursor(options)}`) },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function refusal(status: number, body: unknown, text: string): PortalApiError {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (typeof error?.code === "string" && typeof error.message === "string")
    return new PortalApiError(status, error.code, error.message);
  return new PortalApiError(status, `HTTP_${status}`, text.trim().slice(0, 200) || `HTTP ${status}`);
}

/** The API reads `since` as a date and time: a number or Date goes as ISO-8601 (an invalid one as "", a 422). */
function isoTime(time: PortalTime): string {
  if (typeof time === "string") return time;
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}
