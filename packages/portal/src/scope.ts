/**
 * Everything a tenant may read or do in the portal, and nothing else: the one implementation the
 * pages and the JSON API share. Every id is looked up, then checked against the tenant before
 * anything is read further or changed; another tenant's id, an unknown id and a tenant-less record
 * all answer the same `NOT_FOUND`, so a tenant cannot even learn that an id exists.
 */
import {
  type AttemptRecord,
  type AuditEntry,
  type DeliveryRecord,
  type Endpoint,
  type EventFilter,
  InvalidInputError,
  type Message,
  NotFoundError,
  type Outbound,
  type Page,
  PostelError,
  type Storage,
  systemClock,
} from "@postel/core";

/** The parts of `postel.outbound` the portal uses. */
export type PortalOutbound = Pick<
  Outbound<Storage<unknown>>,
  "endpoints" | "messages" | "replay" | "auditLog" | "catalog"
>;

/** Who acts in a scope: the tenant, and the name the audit log records. */
export interface ScopeCaller {
  tenantId: string;
  actor: string;
}

/** What a tenant may set on its endpoints (never its tenant, headers, policies or secret). */
export interface TenantEndpointInput {
  url: string;
  /** Event types (or globs) the endpoint receives; with Postel's catalog each must match a declared type. */
  types?: string[] | undefined;
  /** Only events matching it (null clears it). */
  filter?: EventFilter | null | undefined;
  /** A note for the tenant (null clears it). */
  description?: string | null | undefined;
}

/** Limits the app sets per tenant. */
export interface TenantLimits {
  /** At most this many endpoints per tenant. Default 20. */
  maxEndpoints: number;
  /** Test events a tenant may send per hour, counted from the audit log. Default 60. */
  testEventsPerHour: number;
  /** Recovers a tenant may run per hour, counted from the audit log. Default 10. */
  recoversPerHour: number;
}

/** The limits a portal applies when the app sets none. */
export const DEFAULT_LIMITS: TenantLimits = { maxEndpoints: 20, testEventsPerHour: 60, recoversPerHour: 10 };

/** What the audit log calls each action a tenant can take in the portal. */
export const PORTAL_ACTIONS = [
  "portal.sign-in",
  "endpoint.create",
  "endpoint.update",
  "endpoint.disable",
  "endpoint.enable",
  "endpoint.delete",
  "secret.reveal",
  "secret.rotate",
  "endpoint.test",
  "delivery.replay",
  "endpoint.recover",
] as const;

/** One of {@link PORTAL_ACTIONS}. */
export type PortalAction = (typeof PORTAL_ACTIONS)[number];

const HOUR = 3_600_000;

/** A tenant hit a limit the app set. Code `PORTAL_LIMIT_REACHED`. */
export class PortalLimitError extends PostelError {}

/**
 * An endpoint as its tenant sees it: what the tenant set and its state. The app's own settings
 * (custom header values, metadata, transforms, retry and limit policies) stay out of the portal;
 * only the names of the custom headers Postel sends are shown.
 */
export interface TenantEndpoint {
  id: string;
  url: string;
  description: string | null;
  types: string[];
  filter: Record<string, unknown> | null;
  state: Endpoint["state"];
  disabledReason: string | null;
  circuitOpenUntil: number | null;
  /** The names of the headers the app adds to every request (their values are never shown). */
  headerNames: string[];
  createdAt: number;
  updatedAt: number;
}

/** A message as its tenant sees it (no trace context, no test-routing field). */
export interface TenantMessage {
  id: string;
  type: string;
  data: unknown;
  status: Message["status"];
  idempotencyKey: string | null;
  createdAt: number;
  expiresAt: number | null;
  finishedAt: number | null;
}

/** A delivery as its tenant sees it (no lease fields). */
export interface TenantDeliveryRecord {
  id: string;
  messageId: string;
  endpointId: string;
  webhookId: string;
  status: DeliveryRecord["status"];
  attemptsMade: number;
  retriesUsed: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A delivery of one of the tenant's messages to one of its endpoints, with its attempts. */
export interface TenantDelivery {
  delivery: TenantDeliveryRecord;
  attempts: AttemptRecord[];
}

/** The tenant's view of an endpoint. */
export function tenantEndpoint(e: Endpoint): TenantEndpoint {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    types: e.types,
    filter: e.filter,
    state: e.state,
    disabledReason: e.disabledReason,
    circuitOpenUntil: e.circuitOpenUntil,
    headerNames: Object.keys(e.headers),
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

/** The tenant's view of a message. */
export function tenantMessage(m: Message): TenantMessage {
  return {
    id: m.id,
    type: m.type,
    data: m.data,
    status: m.status,
    idempotencyKey: m.idempotencyKey,
    createdAt: m.createdAt,
    expiresAt: m.expiresAt,
    finishedAt: m.finishedAt,
  };
}

function tenantDeliveryRecord(d: DeliveryRecord): TenantDeliveryRecord {
  return {
    id: d.id,
    messageId: d.messageId,
    endpointId: d.endpointId,
    webhookId: d.webhookId,
    status: d.status,
    attemptsMade: d.attemptsMade,
    retriesUsed: d.retriesUsed,
    nextAttemptAt: d.nextAttemptAt,
    lastError: d.lastError,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

const pageOf = <T, U>(page: Page<T>, map: (item: T) => U): Page<U> => ({
  items: page.items.map(map),
  nextCursor: page.nextCursor,
});

/** Recover's selection: failed and dead-lettered deliveries of one endpoint's messages created since a time. */
const RECOVERABLE = ["failed", "dead-lettered"] as const;
/** A recover replays at most this many deliveries at once (the count says when there are more). */
export const RECOVER_LIMIT = 1_000;

/** The portal's view of one tenant. */
export interface TenantScope {
  readonly tenantId: string;
  listEndpoints(options?: { cursor?: string | undefined }): Promise<Page<TenantEndpoint>>;
  endpoint(id: string): Promise<TenantEndpoint>;
  createEndpoint(input: TenantEndpointInput): Promise<TenantEndpoint>;
  updateEndpoint(id: string, input: Partial<TenantEndpointInput>): Promise<TenantEndpoint>;
  disableEndpoint(id: string): Promise<TenantEndpoint>;
  enableEndpoint(id: string): Promise<TenantEndpoint>;
  deleteEndpoint(id: string): Promise<void>;
  revealSecret(id: string): Promise<string>;
  rotateSecret(id: string, overlap: string): Promise<string>;
  sendTest(id: string, type: string): Promise<{ messageId: string }>;
  listMessages(options?: { cursor?: string | undefined }): Promise<Page<TenantMessage>>;
  message(id: string): Promise<TenantMessage>;
  /** The message's deliveries to the tenant's endpoints, each with its attempts, oldest first. */
  deliveries(messageId: string): Promise<TenantDelivery[]>;
  /** Replays one delivery of the tenant's message to one of its endpoints. */
  replayDelivery(messageId: string, deliveryId: string): Promise<number>;
  /** How many deliveries a recover of `endpointId` since `since` would send again (capped at `RECOVER_LIMIT`). */
  recoverCount(endpointId: string, since: number): Promise<number>;
  /** Sends again every failed or dead-lettered delivery of the endpoint's messages created since `since`. */
  recover(endpointId: string, since: number): Promise<number>;
  /** The event types an endpoint can subscribe to and a test can send: Postel's catalog, in its order. */
  eventTypes(): EventTypeInfo[];
  /** What was done in this tenant's portal (its own audit log), newest first. */
  activity(options?: { cursor?: string | undefined }): Promise<Page<AuditEntry>>;
}

/** One type of the catalog as the portal shows it. */
export interface EventTypeInfo {
  type: string;
  description: string;
  group: string | null;
  /** `true`, or what to use instead; null when current. */
  deprecated: boolean | string | null;
}

const PAGE_SIZE = 50;

/**
 * The scope of `caller.tenantId` over `outbound`, under `limits`; every change is written to the
 * audit log (`outbound.auditLog`) as `caller.actor`, with source `"portal"`. Event types are checked
 * by the endpoints API itself, against the catalog Postel was configured with (`outbound.events`).
 */
export function tenantScope(
  outbound: PortalOutbound,
  caller: ScopeCaller,
  limits: Partial<TenantLimits> = {},
  clock: { now(): number } = systemClock,
): TenantScope {
  const { tenantId, actor } = caller;
  const limit = { ...DEFAULT_LIMITS, ...limits };
  const audit = async (
    action: PortalAction,
    target: string | null,
    detail: Record<string, string | number | boolean | null> | null = null,
  ) => {
    await outbound.auditLog.record({ tenantId, actor, action, target, source: "portal", detail });
  };
  // Counted from the audit log, so the budget holds across processes and restarts. Two requests
  // racing at the edge of the budget can both pass: a rate, not a quota.
  const withinRate = async (action: PortalAction, perHour: number, what: string) => {
    const used = await outbound.auditLog.count({ tenantId, actions: [action], since: clock.now() - HOUR });
    if (used >= perHour)
      throw new PortalLimitError(
        "PORTAL_LIMIT_REACHED",
        `You have sent ${perHour} ${what} in the last hour, the most this account may: try again later.`,
      );
  };
  const ownEndpoint = async (id: string): Promise<Endpoint> => {
    const endpoint = typeof id === "string" ? await outbound.endpoints.get(id).catch(notFoundOnBadId) : null;
    if (endpoint === null || endpoint.tenantId !== tenantId)
      throw new NotFoundError("ENDPOINT_NOT_FOUND", "No such endpoint.");
    return endpoint;
  };
  const ownMessage = async (id: string) => {
    const message = typeof id === "string" ? await outbound.messages.get(id).catch(notFoundOnBadId) : null;
    if (message === null || message.tenantId !== tenantId)
      throw new NotFoundError("MESSAGE_NOT_FOUND", "No such message.");
    return message;
  };
  // Only the four fields a tenant owns, whatever else the input carries (a tenantId, headers, a secret).
  const fields = (input: Partial<TenantEndpointInput>) => {
    const out: { url?: string; types?: string[]; filter?: EventFilter | null; description?: string | null } =
      {};
    if (input.url !== undefined) out.url = input.url;
    if (input.types !== undefined) out.types = input.types;
    if (input.filter !== undefined) out.filter = input.filter;
    if (input.description !== undefined) out.description = input.description;
    return out;
  };
  const ownDeliveries = async (messageId: string): Promise<DeliveryRecord[]> => {
    await ownMessage(messageId);
    const deliveries = await outbound.messages.deliveries(messageId);
    const owned: DeliveryRecord[] = [];
    for (const delivery of deliveries) {
      const endpoint = await outbound.endpoints.get(delivery.endpointId);
      if (endpoint !== null && endpoint.tenantId === tenantId) owned.push(delivery);
    }
    return owned;
  };
  const recoverSelection = async (endpointId: string, since: number, dryRun: boolean) => {
    await ownEndpoint(endpointId);
    if (!Number.isFinite(since))
      throw new InvalidInputError("INVALID_ARGUMENT", "Pick the time to recover from (a date and time).");
    return outbound.replay({ endpointId, since }, { status: [...RECOVERABLE], limit: RECOVER_LIMIT, dryRun });
  };

  return {
    tenantId,
    listEndpoints: async (options = {}) =>
      pageOf(
        await outbound.endpoints.list({ tenantId, limit: PAGE_SIZE, cursor: options.cursor }),
        tenantEndpoint,
      ),
    endpoint: async (id) => tenantEndpoint(await ownEndpoint(id)),
    async createEndpoint(input) {
      const existing = await outbound.endpoints.list({ tenantId, limit: limit.maxEndpoints });
      if (existing.items.length >= limit.maxEndpoints) {
        throw new PortalLimitError(
          "PORTAL_LIMIT_REACHED",
          `You have ${limit.maxEndpoints} endpoints, the most this account may have: delete one to add another.`,
        );
      }
      const created = await outbound.endpoints.create({ ...fields(input), url: input.url, tenantId });
      await audit("endpoint.create", created.id, { url: created.url });
      return tenantEndpoint(created);
    },
    async updateEndpoint(id, input) {
      await ownEndpoint(id);
      const changed = fields(input);
      const updated = await outbound.endpoints.update(id, changed);
      await audit("endpoint.update", id, { fields: Object.keys(changed).join(",") });
      return tenantEndpoint(updated);
    },
    async disableEndpoint(id) {
      await ownEndpoint(id);
      const endpoint = await outbound.endpoints.disable(id, "disabled in the portal");
      await audit("endpoint.disable", id);
      return tenantEndpoint(endpoint);
    },
    async enableEndpoint(id) {
      await ownEndpoint(id);
      const endpoint = await outbound.endpoints.enable(id);
      await audit("endpoint.enable", id);
      return tenantEndpoint(endpoint);
    },
    async deleteEndpoint(id) {
      const endpoint = await ownEndpoint(id);
      await outbound.endpoints.delete(id);
      await audit("endpoint.delete", id, { url: endpoint.url });
    },
    async revealSecret(id) {
      await ownEndpoint(id);
      const secret = await outbound.endpoints.secret(id);
      await audit("secret.reveal", id);
      return secret;
    },
    async rotateSecret(id, overlap) {
      await ownEndpoint(id);
      const secret = await outbound.endpoints.rotateSecret(id, { overlap: overlap as "24h" });
      await audit("secret.rotate", id, { overlap });
      return secret;
    },
    async sendTest(id, type) {
      await ownEndpoint(id);
      await withinRate("endpoint.test", limit.testEventsPerHour, "test events");
      const sent = await outbound.endpoints.sendTest(id, { type });
      await audit("endpoint.test", id, { type, messageId: sent.id });
      return { messageId: sent.id };
    },
    listMessages: async (options = {}) =>
      pageOf(
        await outbound.messages.list({ tenantId, limit: PAGE_SIZE, cursor: options.cursor }),
        tenantMessage,
      ),
    message: async (id) => tenantMessage(await ownMessage(id)),
    async deliveries(messageId) {
      const deliveries = await ownDeliveries(messageId);
      const attempts = await outbound.messages.attempts(messageId);
      return deliveries.map((delivery) => ({
        delivery: tenantDeliveryRecord(delivery),
        attempts: attempts.filter((attempt) => attempt.deliveryId === delivery.id),
      }));
    },
    async replayDelivery(messageId, deliveryId) {
      const delivery = (await ownDeliveries(messageId)).find((d) => d.id === deliveryId);
      if (delivery === undefined) throw new NotFoundError("DELIVERY_NOT_FOUND", "No such delivery.");
      const replayed = await outbound.replay({ messageId, endpointId: delivery.endpointId });
      await audit("delivery.replay", deliveryId, { messageId, replayed: replayed.length });
      return replayed.length;
    },
    eventTypes: () => {
      const catalog = outbound.catalog;
      if (catalog === null) return [];
      return catalog.types.map((type) => {
        const definition = catalog.definitions[type]!;
        return {
          type,
          description: definition.description,
          group: definition.group ?? null,
          deprecated: definition.deprecated ?? null,
        };
      });
    },
    activity: (options = {}) =>
      outbound.auditLog.list({ tenantId, limit: PAGE_SIZE, cursor: options.cursor }),
    recoverCount: async (endpointId, since) => (await recoverSelection(endpointId, since, true)).length,
    async recover(endpointId, since) {
      await ownEndpoint(endpointId);
      await withinRate("endpoint.recover", limit.recoversPerHour, "recovers");
      const replayed = (await recoverSelection(endpointId, since, false)).length;
      await audit("endpoint.recover", endpointId, { since: new Date(since).toISOString(), replayed });
      return replayed;
    },
  };
}

/** An id the operations API refuses as malformed is, to a tenant, simply not there. */
function notFoundOnBadId(error: unknown): null {
  if (error instanceof InvalidInputError) return null;
  throw error;
}
