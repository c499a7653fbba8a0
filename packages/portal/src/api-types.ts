/**
 * The JSON the portal's API reads and writes, as plain interfaces for `@postel/portal/client`
 * (which imports nothing, so a browser bundle stays small). Every time is epoch milliseconds, as
 * core stores it; every absent value is `null`. A type test holds them equal to the tenant's views
 * in `scope.ts`, and the client's test checks real answers against the OpenAPI document.
 */

/** A page of a list: pass `nextCursor` back as `cursor` for the next one (null on the last page). */
export interface PortalPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** One event type of the app's catalog. */
export interface PortalEventType {
  type: string;
  description: string;
  group: string | null;
  /** `true`, or what to use instead; null when current. */
  deprecated: boolean | string | null;
}

/** One of the tenant's webhook endpoints (its secret is read with `revealSecret`). */
export interface PortalEndpoint {
  id: string;
  url: string;
  description: string | null;
  /** Event-type globs; `*` matches any run of characters. */
  types: string[];
  filter: Record<string, unknown> | null;
  state: "active" | "circuit-open" | "disabled";
  disabledReason: string | null;
  /** While `circuit-open`: when the next probe may run. */
  circuitOpenUntil: number | null;
  /** The names of the headers the app adds to every request (never their values). */
  headerNames: string[];
  createdAt: number;
  updatedAt: number;
}

/** What a tenant sets when it adds an endpoint. */
export interface PortalEndpointInput {
  url: string;
  /** Event types or globs. Default `["*"]`. */
  types?: string[];
  /** A structural filter on the event, e.g. `{ "data.amount": { $gte: 100 } }`; null for none. */
  filter?: Record<string, unknown> | null;
  /** A note for people; null for none. */
  description?: string | null;
}

/** The fields of an endpoint to change; the others are kept. */
export type PortalEndpointPatch = Partial<PortalEndpointInput>;

/** A message sent to the tenant's endpoints. */
export interface PortalMessage {
  id: string;
  type: string;
  data: unknown;
  status: "pending" | "dispatched" | "dead-lettered" | "expired";
  idempotencyKey: string | null;
  createdAt: number;
  expiresAt: number | null;
  finishedAt: number | null;
}

/** One message's delivery to one endpoint. */
export interface PortalDelivery {
  id: string;
  messageId: string;
  endpointId: string;
  /** The `webhook-id` the receiver sees; stable across retries. */
  webhookId: string;
  /** `waiting`: queued behind an earlier message of its ordering key to the same endpoint. */
  status: "pending" | "held" | "waiting" | "succeeded" | "failed" | "dead-lettered" | "expired" | "cancelled";
  attemptsMade: number;
  retriesUsed: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** One HTTP attempt of a delivery. */
export interface PortalAttempt {
  id: string;
  deliveryId: string;
  messageId: string;
  endpointId: string;
  webhookId: string;
  attemptNumber: number;
  startedAt: number;
  latencyMs: number;
  outcome: "success" | "retryable" | "permanent";
  /** The HTTP status; null when no response arrived. */
  statusCode: number | null;
  errorCode: string | null;
  error: string | null;
  responseSnippet: string | null;
}

/** A delivery with its attempts, oldest first. */
export interface PortalTenantDelivery {
  delivery: PortalDelivery;
  attempts: PortalAttempt[];
}

/** One entry of the tenant's audit log: who did what to what, and when. */
export interface PortalAuditEntry {
  id: string;
  at: number;
  tenantId: string | null;
  actor: string;
  /** What was done, e.g. `endpoint.create`. */
  action: string;
  /** What it was done to, e.g. an endpoint id. */
  target: string | null;
  /** Where it was done, e.g. `portal`. */
  source: string;
  detail: Record<string, string | number | boolean | null> | null;
  key: string | null;
}

/** A duration such as `"30s"`, `"2h"` or `"1d"`. */
export type PortalDuration = `${number}${"ms" | "s" | "m" | "h" | "d"}`;

/** What `recover` starts from: an ISO-8601 time, epoch milliseconds, or a `Date`. */
export type PortalTime = string | number | Date;
