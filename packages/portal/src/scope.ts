/**
 * Everything a tenant may read or do in the portal, and nothing else: the one implementation the
 * pages and the JSON API share. Every id is looked up, then checked against the tenant before
 * anything is read further or changed; another tenant's id, an unknown id and a tenant-less record
 * all answer the same `NOT_FOUND`, so a tenant cannot even learn that an id exists.
 */
import {
  type AttemptRecord,
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
} from "@postel/core";

/** The parts of `postel.outbound` the portal uses. */
export type PortalOutbound = Pick<Outbound<Storage<unknown>>, "endpoints" | "messages" | "replay">;

/** What a tenant may set on its endpoints (never its tenant, headers, policies or secret). */
export interface TenantEndpointInput {
  url: string;
  /** Event types (or globs) the endpoint receives; with Postel's catalog each must match a declared type. */
  types?: string[] | undefined;
  filter?: EventFilter | undefined;
  description?: string | undefined;
}

/** Limits the app sets per tenant. */
export interface TenantLimits {
  /** At most this many endpoints per tenant. Default 20. */
  maxEndpoints: number;
}

/** A tenant hit a limit the app set. Code `PORTAL_LIMIT_REACHED`. */
export class PortalLimitError extends PostelError {}

/** A delivery of one of the tenant's messages to one of its endpoints, with its attempts. */
export interface TenantDelivery {
  delivery: DeliveryRecord;
  attempts: AttemptRecord[];
}

/** Recover's selection: failed and dead-lettered deliveries of one endpoint's messages created since a time. */
const RECOVERABLE = ["failed", "dead-lettered"] as const;
/** A recover replays at most this many deliveries at once (the count says when there are more). */
export const RECOVER_LIMIT = 1_000;

/** The portal's view of one tenant. */
export interface TenantScope {
  readonly tenantId: string;
  listEndpoints(options?: { cursor?: string | undefined }): Promise<Page<Endpoint>>;
  endpoint(id: string): Promise<Endpoint>;
  createEndpoint(input: TenantEndpointInput): Promise<Endpoint>;
  updateEndpoint(id: string, input: Partial<TenantEndpointInput>): Promise<Endpoint>;
  disableEndpoint(id: string): Promise<Endpoint>;
  enableEndpoint(id: string): Promise<Endpoint>;
  deleteEndpoint(id: string): Promise<void>;
  revealSecret(id: string): Promise<string>;
  rotateSecret(id: string, overlap: string): Promise<string>;
  sendTest(id: string, type: string): Promise<{ messageId: string }>;
  listMessages(options?: { cursor?: string | undefined }): Promise<Page<Message>>;
  message(id: string): Promise<Message>;
  /** The message's deliveries to the tenant's endpoints, each with its attempts, oldest first. */
  deliveries(messageId: string): Promise<TenantDelivery[]>;
  /** Replays one delivery of the tenant's message to one of its endpoints. */
  replayDelivery(messageId: string, deliveryId: string): Promise<number>;
  /** How many deliveries a recover of `endpointId` since `since` would send again (capped at `RECOVER_LIMIT`). */
  recoverCount(endpointId: string, since: number): Promise<number>;
  /** Sends again every failed or dead-lettered delivery of the endpoint's messages created since `since`. */
  recover(endpointId: string, since: number): Promise<number>;
}

const PAGE_SIZE = 50;

/**
 * The scope of `tenantId` over `outbound`, under `limits`. Event types are checked by the endpoints
 * API itself, against the catalog Postel was configured with (`outbound.events`).
 */
export function tenantScope(outbound: PortalOutbound, tenantId: string, limits: TenantLimits): TenantScope {
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
    const out: { url?: string; types?: string[]; filter?: EventFilter; description?: string } = {};
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
    listEndpoints: (options = {}) =>
      outbound.endpoints.list({ tenantId, limit: PAGE_SIZE, cursor: options.cursor }),
    endpoint: ownEndpoint,
    async createEndpoint(input) {
      const existing = await outbound.endpoints.list({ tenantId, limit: limits.maxEndpoints });
      if (existing.items.length >= limits.maxEndpoints) {
        throw new PortalLimitError(
          "PORTAL_LIMIT_REACHED",
          `You have ${limits.maxEndpoints} endpoints, the most this account may have: delete one to add another.`,
        );
      }
      return outbound.endpoints.create({ ...fields(input), url: input.url, tenantId });
    },
    async updateEndpoint(id, input) {
      await ownEndpoint(id);
      return outbound.endpoints.update(id, fields(input));
    },
    async disableEndpoint(id) {
      await ownEndpoint(id);
      return outbound.endpoints.disable(id, "disabled in the portal");
    },
    async enableEndpoint(id) {
      await ownEndpoint(id);
      return outbound.endpoints.enable(id);
    },
    async deleteEndpoint(id) {
      await ownEndpoint(id);
      await outbound.endpoints.delete(id);
    },
    async revealSecret(id) {
      await ownEndpoint(id);
      return outbound.endpoints.secret(id);
    },
    async rotateSecret(id, overlap) {
      await ownEndpoint(id);
      return outbound.endpoints.rotateSecret(id, { overlap: overlap as "24h" });
    },
    async sendTest(id, type) {
      await ownEndpoint(id);
      const sent = await outbound.endpoints.sendTest(id, { type });
      return { messageId: sent.id };
    },
    listMessages: (options = {}) =>
      outbound.messages.list({ tenantId, limit: PAGE_SIZE, cursor: options.cursor }),
    message: ownMessage,
    async deliveries(messageId) {
      const deliveries = await ownDeliveries(messageId);
      const attempts = await outbound.messages.attempts(messageId);
      return deliveries.map((delivery) => ({
        delivery,
        attempts: attempts.filter((attempt) => attempt.deliveryId === delivery.id),
      }));
    },
    async replayDelivery(messageId, deliveryId) {
      const delivery = (await ownDeliveries(messageId)).find((d) => d.id === deliveryId);
      if (delivery === undefined) throw new NotFoundError("DELIVERY_NOT_FOUND", "No such delivery.");
      const replayed = await outbound.replay({ messageId, endpointId: delivery.endpointId });
      return replayed.length;
    },
    recoverCount: async (endpointId, since) => (await recoverSelection(endpointId, since, true)).length,
    recover: async (endpointId, since) => (await recoverSelection(endpointId, since, false)).length,
  };
}

/** An id the operations API refuses as malformed is, to a tenant, simply not there. */
function notFoundOnBadId(error: unknown): null {
  if (error instanceof InvalidInputError) return null;
  throw error;
}
