import { readFile } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { type AttemptRecord, type AuditEntry, defineEvents, isPostelError, type Page } from "@postel/core";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, expectTypeOf, test } from "vitest";
import {
  createPortalClient,
  PortalApiError,
  type PortalAttempt,
  type PortalAuditEntry,
  type PortalClient,
  type PortalDelivery,
  type PortalEndpoint,
  type PortalEventType,
  type PortalMessage,
  type PortalPage,
  type PortalTenantDelivery,
} from "../src/client.js";
import { API_ROUTES, createPortal, portalOpenApi } from "../src/index.js";
import { honoPortal } from "../src/mounts/hono.js";
import type {
  EventTypeInfo,
  TenantDelivery,
  TenantDeliveryRecord,
  TenantEndpoint,
  TenantMessage,
} from "../src/scope.js";
import { responseChecker } from "./support/openapi-responses.js";
import { outboxWithReceiver } from "./support/outbox.js";

const example = { orderId: "ord_1", total: 12.5 };
const anything = {
  "~standard": { version: 1, vendor: "test", validate: (value: unknown) => ({ value }) },
} as const;
const { postel, origin } = outboxWithReceiver(
  defineEvents({ "order.created": { schema: anything, description: "An order.", examples: [example] } }),
);
// The app's session: a cookie naming the tenant, as the document's security scheme says.
const portal = createPortal({
  postel,
  basePath: "/webhooks",
  limits: { maxEndpoints: 60 },
  authenticate: (request) => {
    const tenantId = /(?:^|;\s*)session=([^;]+)/.exec(request.headers.get("cookie") ?? "")?.[1];
    return tenantId === undefined ? null : { tenantId, actor: `${tenantId}-admin` };
  },
});
const app = new Hono();
app.all("/webhooks/*", honoPortal(portal));

const checker = responseChecker(portalOpenApi({ basePath: "/webhooks" }));
const routesDriven = new Set<string>();
let server: Server;
let baseUrl = "";

/** A client for `tenant` whose every answer is checked against the OpenAPI document. */
function clientOf(tenant: string | null): PortalClient {
  return createPortalClient({
    baseUrl,
    headers: tenant === null ? {} : { cookie: `session=${tenant}` },
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      const { route, problems } = checker.check(
        init.method ?? "GET",
        new URL(url).pathname.slice("/webhooks".length),
        response.status,
        response.headers.get("content-type") ?? "",
        await response.clone().text(),
      );
      expect(problems, `${init.method} ${url} → ${response.status}`).toEqual([]);
      routesDriven.add(route);
      return response;
    },
  });
}

async function refusalOf(promise: Promise<unknown>): Promise<PortalApiError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(PortalApiError);
  return error as PortalApiError;
}

beforeAll(async () => {
  server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s as Server));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("createPortalClient() on a real server", () => {
  test("drives every route through an endpoint's life, each answer as the document describes it", async () => {
    const acme = clientOf("acme");
    expect(await acme.eventTypes.list()).toEqual({
      items: [{ type: "order.created", description: "An order.", group: null, deprecated: null }],
    });
    const created = await acme.endpoints.create({ url: `${origin()}/fail`, types: ["order.*"] });
    expect(created).toMatchObject({ state: "active", types: ["order.*"], description: null });
    expect(typeof created.createdAt).toBe("number");
    expect(await acme.endpoints.list()).toEqual({ items: [created], nextCursor: null });
    expect(await acme.endpoints.get(created.id)).toEqual(created);
    const updated = await acme.endpoints.update(created.id, { description: "Orders" });
    expect(updated).toMatchObject({ id: created.id, description: "Orders", types: ["order.*"] });

    const { secret } = await acme.endpoints.revealSecret(created.id);
    expect(secret).toMatch(/^whsec_/);
    const rotated = await acme.endpoints.rotateSecret(created.id, { overlap: "1h" });
    expect(rotated.secret).not.toBe(secret);
    expect(await acme.endpoints.revealSecret(created.id)).toEqual(rotated);

    const { messageId } = await acme.endpoints.sendTest(created.id, { type: "order.created" });
    await postel.drain();
    const messages = await acme.messages.list();
    expect(messages.items.map((m) => m.id)).toEqual([messageId]);
    const message = await acme.messages.get(messageId);
    expect(message).toMatchObject({ type: "order.created", data: example });
    const [trail] = await acme.messages.deliveries(messageId);
    expect(trail?.delivery).toMatchObject({ endpointId: created.id, status: "dead-lettered" });
    expect(trail?.attempts.map((a) => a.statusCode)).toEqual([500]);

    expect(await acme.messages.replayDelivery(messageId, trail!.delivery.id)).toEqual({ replayed: 1 });
    await postel.drain();
    expect((await acme.messages.deliveries(messageId))[0]?.attempts).toHaveLength(2);
    const since = new Date(0);
    expect(await acme.endpoints.recover(created.id, { since, dryRun: true })).toEqual({ wouldReplay: 1 });
    expect(await acme.endpoints.recover(created.id, { since })).toEqual({ replayed: 1 });
    await postel.drain();

    expect(await acme.endpoints.disable(created.id)).toMatchObject({ state: "disabled" });
    expect(await acme.endpoints.enable(created.id)).toMatchObject({ state: "active" });
    expect(await acme.endpoints.delete(created.id)).toEqual({ deleted: true });
    expect((await refusalOf(acme.endpoints.get(created.id))).code).toBe("ENDPOINT_NOT_FOUND");
    const activity = await acme.activity.list();
    expect(activity.items.map((entry) => entry.action)).toContain("endpoint.delete");
    expect(activity.items.every((entry) => entry.tenantId === "acme" && entry.actor === "acme-admin")).toBe(
      true,
    );
    expect([...routesDriven].sort()).toEqual([...API_ROUTES].sort());
  });

  test("refusals throw PortalApiError with the API's status and code, and are documented too", async () => {
    const acme = clientOf("acme");
    const theirs = await clientOf("globex").endpoints.create({ url: `${origin()}/ok` });
    const stolen = await refusalOf(acme.endpoints.revealSecret(theirs.id));
    expect([stolen.status, stolen.code]).toEqual([404, "ENDPOINT_NOT_FOUND"]);
    expect(stolen.message).toBe("No such endpoint.");
    expect(isPostelError(stolen)).toBe(true);
    const badUrl = await refusalOf(acme.endpoints.create({ url: "not a url" }));
    expect(badUrl.status).toBe(422);
    expect(badUrl.code).toMatch(/^INVALID_/);
    const mine = await acme.endpoints.create({ url: `${origin()}/ok` });
    for (const since of ["yesterday", Number.NaN]) {
      const badTime = await refusalOf(acme.endpoints.recover(mine.id, { since, dryRun: true }));
      expect([badTime.status, badTime.code]).toEqual([422, "INVALID_ARGUMENT"]);
    }
    // Encoded, an id with a slash stays one segment: the endpoint is not found, not the route.
    const oddId = await refusalOf(acme.endpoints.disable(`${mine.id}/../../messages`));
    expect([oddId.status, oddId.code]).toEqual([404, "ENDPOINT_NOT_FOUND"]);
    // authenticate() refused: a plain-text 403, still a coded error.
    const anonymous = await refusalOf(clientOf(null).endpoints.list());
    expect([anonymous.status, anonymous.code, anonymous.message]).toEqual([403, "HTTP_403", "Forbidden"]);
    await acme.endpoints.delete(mine.id);
  });

  test("pages on with nextCursor", async () => {
    const acme = clientOf("acme");
    const urls = Array.from({ length: 51 }, (_, i) => `${origin()}/ok?n=${i}`);
    for (const url of urls) await acme.endpoints.create({ url });
    const first = await acme.endpoints.list();
    expect(first.items).toHaveLength(50);
    const second = await acme.endpoints.list({ cursor: first.nextCursor! });
    expect(second).toMatchObject({ nextCursor: null });
    expect([...first.items, ...second.items].map((e) => e.url).sort()).toEqual(urls.sort());
  });
});

describe("createPortalClient()", () => {
  test("calls baseUrl's /api/ with the headers given, and a 2xx that is not JSON is an error", async () => {
    const calls: [string, RequestInit][] = [];
    let token = 0;
    const client = createPortalClient({
      baseUrl: "/webhooks/",
      headers: async () => ({ authorization: `Bearer t${++token}` }),
      fetch: async (url, init) => {
        calls.push([url, init]);
        return new Response("<html>Sign in</html>", { headers: { "content-type": "text/html" } });
      },
    });
    const error = await refusalOf(client.messages.deliveries("m/1"));
    expect([error.status, error.code]).toEqual([200, "UNEXPECTED_RESPONSE"]);
    await refusalOf(client.endpoints.delete("e 1"));
    expect(calls.map(([url, init]) => [url, init.method, init.body])).toEqual([
      ["/webhooks/api/messages/m%2F1/deliveries", "GET", undefined],
      ["/webhooks/api/endpoints/e%201", "DELETE", undefined],
    ]);
    expect(calls.map(([, init]) => init.headers)).toEqual([
      { authorization: "Bearer t1", accept: "application/json" },
      { authorization: "Bearer t2", accept: "application/json", "content-type": "application/json" },
    ]);
  });

  test("imports nothing at runtime, so a browser bundle of it holds only itself", async () => {
    const source = await readFile(new URL("../src/client.ts", import.meta.url), "utf8");
    expect(source.match(/^import (?!type )|^export (?:\{|\*)/gm)).toBeNull();
  });

  test("its types are the JSON of the tenant's views", () => {
    expectTypeOf<PortalEventType>().toEqualTypeOf<EventTypeInfo>();
    expectTypeOf<PortalEndpoint>().toEqualTypeOf<TenantEndpoint>();
    expectTypeOf<PortalMessage>().toEqualTypeOf<TenantMessage>();
    expectTypeOf<PortalDelivery>().toEqualTypeOf<TenantDeliveryRecord>();
    expectTypeOf<PortalAttempt>().toEqualTypeOf<AttemptRecord>();
    expectTypeOf<PortalTenantDelivery>().toEqualTypeOf<TenantDelivery>();
    expectTypeOf<PortalAuditEntry>().toEqualTypeOf<AuditEntry>();
    expectTypeOf<PortalPage<PortalEndpoint>>().toEqualTypeOf<Page<TenantEndpoint>>();
  });
});
