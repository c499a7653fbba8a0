/**
 * The operations of the portal's JSON API, one per route and keyed exactly like `API_ROUTES`
 * (`"METHOD path"`, ids as `:id`): adding a route to the API means adding its entry here, and the
 * document's test fails until it is. Only what differs per route is written down; the statuses every
 * route shares (a refused caller, a write's JSON and site checks, an unknown id) are derived.
 */
import { type JsonSchema, ref } from "./api-schemas.js";

/** The statuses a route can answer besides 200 and those derived from its method and ids. */
export type ExtraStatus = 422 | 429;

/** What the document says of one route. */
export interface Operation {
  operationId: string;
  summary: string;
  tag: "endpoints" | "messages" | "activity";
  /** The 200 body. */
  ok: JsonSchema;
  /** The request body's component schema (a write's body is optional unless `required`). */
  body?: { schema: string; required?: true };
  /** A list: takes `?cursor=`. */
  paged?: true;
  errors?: readonly ExtraStatus[];
}

/** One operation per route of the API, keyed like `API_ROUTES`. */
export const OPERATIONS: Record<string, Operation> = {
  "GET event-types": {
    operationId: "listEventTypes",
    summary: "The event types an endpoint can subscribe to and a test can send",
    tag: "endpoints",
    ok: ref("EventTypeList"),
  },
  "GET endpoints": {
    operationId: "listEndpoints",
    summary: "List your endpoints, 50 a page",
    tag: "endpoints",
    ok: ref("EndpointPage"),
    paged: true,
    errors: [422],
  },
  "POST endpoints": {
    operationId: "createEndpoint",
    summary: "Add an endpoint",
    tag: "endpoints",
    ok: ref("Endpoint"),
    body: { schema: "EndpointInput", required: true },
    errors: [422, 429],
  },
  "GET endpoints/:id": {
    operationId: "getEndpoint",
    summary: "Read an endpoint",
    tag: "endpoints",
    ok: ref("Endpoint"),
  },
  "PATCH endpoints/:id": {
    operationId: "updateEndpoint",
    summary: "Change an endpoint's URL, types, filter or description",
    tag: "endpoints",
    ok: ref("Endpoint"),
    body: { schema: "EndpointPatch", required: true },
    errors: [422],
  },
  "DELETE endpoints/:id": {
    operationId: "deleteEndpoint",
    summary: "Delete an endpoint",
    tag: "endpoints",
    ok: ref("Deleted"),
  },
  "POST endpoints/:id/disable": {
    operationId: "disableEndpoint",
    summary: "Stop deliveries to an endpoint (they are held until it is enabled)",
    tag: "endpoints",
    ok: ref("Endpoint"),
  },
  "POST endpoints/:id/enable": {
    operationId: "enableEndpoint",
    summary: "Resume deliveries to an endpoint",
    tag: "endpoints",
    ok: ref("Endpoint"),
  },
  "POST endpoints/:id/reveal-secret": {
    operationId: "revealEndpointSecret",
    summary: "Read an endpoint's signing secret",
    tag: "endpoints",
    ok: ref("Secret"),
  },
  "POST endpoints/:id/rotate-secret": {
    operationId: "rotateEndpointSecret",
    summary: "Replace an endpoint's signing secret; the old one keeps signing for the overlap",
    tag: "endpoints",
    ok: ref("Secret"),
    body: { schema: "RotateSecretInput" },
    errors: [422],
  },
  "POST endpoints/:id/test": {
    operationId: "sendTestEvent",
    summary: "Send a test event to this endpoint only",
    tag: "endpoints",
    ok: ref("TestEventSent"),
    body: { schema: "TestEventInput", required: true },
    errors: [422, 429],
  },
  "POST endpoints/:id/recover": {
    operationId: "recoverEndpoint",
    summary: "Send again the failed and dead-lettered deliveries since a time (dryRun: count them)",
    tag: "endpoints",
    ok: { oneOf: [ref("RecoverCount"), ref("Replayed")] },
    body: { schema: "RecoverInput", required: true },
    errors: [422, 429],
  },
  "GET messages": {
    operationId: "listMessages",
    summary: "List your messages, newest first, 50 a page",
    tag: "messages",
    ok: ref("MessagePage"),
    paged: true,
    errors: [422],
  },
  "GET messages/:id": {
    operationId: "getMessage",
    summary: "Read a message",
    tag: "messages",
    ok: ref("Message"),
  },
  "GET messages/:id/deliveries": {
    operationId: "listMessageDeliveries",
    summary: "A message's deliveries to your endpoints, each with its attempts",
    tag: "messages",
    ok: { type: "array", items: ref("TenantDelivery") },
  },
  "POST messages/:id/deliveries/:id/replay": {
    operationId: "replayDelivery",
    summary: "Send one delivery of a message again",
    tag: "messages",
    ok: ref("Replayed"),
  },
  "GET activity": {
    operationId: "listActivity",
    summary: "What was done in your portal (its audit log), newest first, 50 a page",
    tag: "activity",
    ok: ref("AuditEntryPage"),
    paged: true,
    errors: [422],
  },
};
