import { requireCapability } from "../storage/capabilities.js";
import { generateKeyPair, generateSecret } from "@postel/signing";
import * as v from "valibot";
import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { type Duration, toMs } from "../duration.js";
import { assertReadable } from "../credentials/credential-error.js";
import { InvalidInputError, NotFoundError, PostelError } from "../errors.js";
import { compileTypeGlobs, isValidEventType } from "../type-glob.js";
import { assertEndpointUrlAllowed } from "../http/network-policy.js";
import type { IdGenerator } from "../ids.js";
import type { EndpointFields, EndpointRecord, EndpointState } from "../storage/records.js";
import type { Storage } from "../storage/storage.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { assertDeclared } from "./catalog.js";
import {
  type EndpointActivity,
  type EndpointActivityOptions,
  endpointActivity,
} from "./endpoint-activity.js";
import { parseEndpointInput } from "./endpoint-input.js";
import { isLookupId } from "./lookup-id.js";
import {
  cursorSchema,
  decodeCursor,
  filterTextSchema,
  limitSchema,
  type Page,
  parseOptions,
  toPage,
} from "./page.js";
import { quote } from "./quote.js";
import { sendTest, type TestEventInput } from "./send-test.js";
import type { CreateEndpointInput, Endpoint, SendResult, UpdateEndpointInput } from "./types.js";

/** Filters of `endpoints.list`. Oldest first. */
export interface ListEndpointsOptions {
  tenantId?: string | undefined;
  state?: EndpointState | undefined;
  /** Page size: 1 to 1000, default 100. */
  limit?: number | undefined;
  /** The `nextCursor` of the previous page; omit for the first page. */
  cursor?: string | undefined;
}

const ListEndpointsSchema = v.strictObject({
  tenantId: v.optional(filterTextSchema),
  state: v.optional(
    v.picklist(
      ["active", "circuit-open", "disabled"],
      'state must be "active", "circuit-open" or "disabled"',
    ),
  ),
  limit: limitSchema,
  cursor: cursorSchema,
});

/** `postel.outbound.endpoints`: where webhooks go, and their state machine. */
export interface EndpointsApi {
  /** Validates, checks the URL against the network policy, and stores a new `active` endpoint. */
  create(input: CreateEndpointInput): Promise<Endpoint>;
  /** The endpoint, or null when there is none with this id. */
  get(id: string): Promise<Endpoint | null>;
  /**
   * Live endpoints, oldest first, one page at a time: pass `nextCursor` back as `cursor` for the next
   * page (keyset on the id: endpoints created meanwhile never shift the pages).
   */
  list(options?: ListEndpointsOptions): Promise<Page<Endpoint>>;
  update(id: string, input: UpdateEndpointInput): Promise<Endpoint>;
  /** Deletes the endpoint; its pending deliveries are cancelled (history stays). */
  delete(id: string): Promise<void>;
  /** Back to `active` from `disabled` or `circuit-open`; held deliveries resume. */
  enable(id: string): Promise<Endpoint>;
  /** Out of delivery rotation: its deliveries are held, not lost, until `enable(id)`. */
  disable(id: string, reason?: string): Promise<Endpoint>;
  /** Adds a new signing secret; the old ones keep signing (both signatures sent) for `overlap`. */
  rotateSecret(id: string, options?: { secret?: string; overlap?: Duration }): Promise<string>;
  /** The newest signing secret (the receiver verifies with it; for `whsk_` keys, derive the `whpk_`). */
  secret(id: string): Promise<string>;
  /**
   * The endpoints a message of `type` is fanned out to, oldest first: every live endpoint whose
   * `types` globs match it (disabled ones included: they get the delivery, held). `tenantId` narrows
   * it to what a message of that tenant reaches (`null`: messages without a tenant); without it,
   * every tenant's. An endpoint's `filter` or `filterFn` may still drop a given event: they read its
   * data. With an event catalog, a type it does not declare throws `UNKNOWN_EVENT_TYPE`.
   * @example
   * const receivers = await postel.outbound.endpoints.forType("order.created", { tenantId: "acme" });
   */
  forType(type: string, options?: { tenantId?: string | null }): Promise<Endpoint[]>;
  /**
   * Sends one test event to this endpoint only, through the normal pipeline (signed, retried,
   * recorded, the message marked with `testEndpointId`): it receives it whatever its `types` and
   * filters, and no other endpoint does. `data` defaults to the catalog's first example of `type`.
   * @example
   * const { id } = await postel.outbound.endpoints.sendTest(endpoint.id, { type: "order.created" });
   */
  sendTest(id: string, event: TestEventInput): Promise<SendResult>;
  /**
   * Why the endpoint is failing, or that it is not: its newest attempts (status, error, response
   * snippet), the last success and since when it has failed, and the circuit's next probe. Reads a
   * day of its health buckets and the stretch of the attempt feed that holds its newest attempts, so
   * it costs the same beside a million pending deliveries. Unknown id: `ENDPOINT_NOT_FOUND`.
   * @example
   * const { lastFailure, failingSince } = await postel.outbound.endpoints.activity(id);
   * if (failingSince) console.log(`failing since ${new Date(failingSince.at).toISOString()}:`, lastFailure?.error);
   */
  activity(id: string, options?: EndpointActivityOptions): Promise<EndpointActivity>;
}

interface EndpointsDeps {
  config: OutboundConfig;
  clock: Clock;
  newId: IdGenerator;
  /** Called after every write so fan-out and delivery caches drop stale endpoints. */
  changed: () => void;
  /** Wakes the workers after a test event is enqueued. */
  wake: () => void;
  telemetry: Telemetry | null;
}

/** Builds `postel.outbound.endpoints`. */
export function createEndpointsApi({
  config,
  clock,
  newId,
  changed,
  wake,
  telemetry,
}: EndpointsDeps): EndpointsApi {
  const { storage } = config;
  const policy = { allowPrivateNetworks: config.http.allowPrivateNetworks };

  async function mustGet(id: string): Promise<EndpointRecord> {
    const endpoint = isLookupId(id) ? await storage.getEndpoint(id) : null;
    if (!endpoint) {
      throw new NotFoundError(
        "ENDPOINT_NOT_FOUND",
        `No endpoint with id ${quote(id)}; list them with endpoints.list().`,
      );
    }
    return endpoint;
  }

  async function setState(id: string, state: EndpointState, reason: string | null): Promise<Endpoint> {
    // Retry the compare-and-set if a worker changed the state in between (e.g. a probe closed the circuit).
    for (let round = 0; round < 5; round++) {
      const current = await mustGet(id);
      if (current.state === state) return publicEndpoint(current);
      const won = await storage.transitionEndpoint(
        id,
        { state: current.state, circuitOpenUntil: current.circuitOpenUntil },
        { state, circuitOpenUntil: null, disabledReason: reason },
        clock.now(),
      );
      if (won) {
        if (state === "active") await storage.releaseHeld(id, clock.now());
        changed();
        return publicEndpoint(await mustGet(id));
      }
    }
    throw new PostelError("ENDPOINT_BUSY", `Endpoint ${id} kept changing state; try again.`);
  }

  return {
    async create(input) {
      const { fields, secret } = parseEndpointInput(input, config, "create");
      needsLimits(storage, fields, "endpoints.create()");
      await assertEndpointUrlAllowed(fields.url as string, policy);
      const now = clock.now();
      const record: EndpointRecord = {
        id: newId("ep"),
        url: fields.url as string,
        description: fields.description ?? null,
        types: fields.types ?? ["*"],
        filter: fields.filter ?? null,
        filterFn: fields.filterFn ?? null,
        transform: fields.transform ?? null,
        headers: fields.headers ?? {},
        retryPolicy: fields.retryPolicy ?? null,
        circuitBreaker: fields.circuitBreaker ?? null,
        autoDisable: fields.autoDisable ?? null,
        maxInFlight: fields.maxInFlight ?? null,
        rateLimit: fields.rateLimit ?? null,
        tenantId: fields.tenantId ?? null,
        metadata: fields.metadata ?? {},
        onKeyFailure: fields.onKeyFailure ?? "skip",
        state: "active",
        circuitOpenUntil: null,
        disabledReason: null,
        createdAt: now,
        updatedAt: now,
        secrets: [{ secret: secret ?? newSecret(config), createdAt: now, expiresAt: null }],
      };
      await storage.createEndpoint(record);
      changed();
      return publicEndpoint(record);
    },
    async get(id) {
      const endpoint = isLookupId(id) ? await storage.getEndpoint(id) : null;
      return endpoint ? publicEndpoint(endpoint) : null;
    },
    async list(options) {
      const { cursor, limit, ...filters } = parseOptions(ListEndpointsSchema, options, "endpoints.list()");
      const after = decodeCursor(cursor, "endpoints", "endpoints.list()");
      const ops = requireCapability(storage, "operations", "endpoints.list()");
      const rows = await ops.listEndpoints({ ...filters, limit: limit + 1, after });
      return toPage(rows, limit, "endpoints", (row) => row.id, publicEndpoint);
    },
    async update(id, input) {
      const { fields } = parseEndpointInput(input, config, "update");
      needsLimits(storage, fields, "endpoints.update()");
      await mustGet(id);
      if (fields.url !== undefined) await assertEndpointUrlAllowed(fields.url, policy);
      const updated = await storage.updateEndpoint(id, fields, clock.now());
      if (!updated) return publicEndpoint(await mustGet(id));
      changed();
      return publicEndpoint(updated);
    },
    async delete(id) {
      await mustGet(id);
      await storage.deleteEndpoint(id, clock.now());
      changed();
    },
    enable: (id) => setState(id, "active", null),
    disable: (id, reason = "manual") => setState(id, "disabled", reason),
    async rotateSecret(id, options = {}) {
      await mustGet(id);
      const secret = options.secret ?? newSecret(config);
      if (options.secret !== undefined) parseEndpointInput({ secret }, config, "update");
      const now = clock.now();
      const overlap = toMs(options.overlap ?? "24h", "rotateSecret overlap");
      await storage.addEndpointSecret(id, { secret, createdAt: now, expiresAt: null }, now + overlap);
      changed();
      return secret;
    },
    async secret(id) {
      const endpoint = await mustGet(id);
      assertReadable(endpoint);
      return endpoint.secrets[0]!.secret;
    },
    async forType(type, options = {}) {
      if (!isValidEventType(type)) {
        throw new InvalidInputError(
          "INVALID_EVENT_TYPE",
          `Event type ${quote(type)} is invalid: use 1-255 letters, digits and "_ . : - /", e.g. "order.created".`,
        );
      }
      const { tenantId } = options;
      if (tenantId !== undefined && tenantId !== null && typeof tenantId !== "string") {
        throw new InvalidInputError(
          "INVALID_ARGUMENT",
          "tenantId must be a string, null (no tenant) or left out (every tenant).",
        );
      }
      if (config.events) assertDeclared(config.events, type);
      const endpoints = await storage.allEndpoints();
      return endpoints
        .filter((e) => (tenantId === undefined || e.tenantId === tenantId) && compileTypeGlobs(e.types)(type))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(publicEndpoint);
    },
    sendTest: async (id, event) =>
      sendTest({ config, clock, newId, wake, telemetry }, await mustGet(id), event),
    activity: async (id, options) => {
      const ops = requireCapability(storage, "operations", "endpoints.activity()");
      return endpointActivity(ops, await mustGet(id), clock.now(), options);
    },
  };
}

function newSecret(config: OutboundConfig): string {
  return config.algorithm === "v1a" ? generateKeyPair().privateKey : generateSecret();
}

/**
 * The API view of an endpoint record: everything but its secrets. Throws `CREDENTIAL_DECRYPT_FAILED`
 * for a record whose credentials could not be decrypted (its headers would be missing).
 */
export function publicEndpoint(record: EndpointRecord): Endpoint {
  assertReadable(record);
  const { secrets: _secrets, ...endpoint } = record;
  return endpoint;
}

/** An endpoint limit is held across workers by the storage's limits capability: refused without it. */
function needsLimits(storage: Storage<unknown>, fields: Partial<EndpointFields>, call: string): void {
  const limited =
    (fields.maxInFlight !== undefined && fields.maxInFlight !== null) ||
    (fields.rateLimit !== undefined && fields.rateLimit !== null);
  if (limited) requireCapability(storage, "limits", `${call} with maxInFlight or rateLimit`);
}
