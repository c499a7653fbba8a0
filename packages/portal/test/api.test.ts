import { InMemoryStorage, isPostelError, Postel } from "@postel/core";
import { describe, expect, test } from "vitest";
import { API_ROUTES, createPortal } from "../src/index.js";
import { outboxWithReceiver } from "./support/outbox.js";

const { postel, origin } = outboxWithReceiver();
// The tenant comes from the app's session: here a header the test sets.
const portal = createPortal({
  postel,
  basePath: "/webhooks",
  authenticate: (request) => {
    const tenantId = request.headers.get("x-test-tenant");
    return tenantId === null ? null : { tenantId, actor: `${tenantId}-admin` };
  },
});

function call(
  tenant: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return portal(
    new Request(`http://app.example/webhooks/api/${path}`, {
      method,
      headers: { "x-test-tenant": tenant, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
}

describe("the portal's JSON API", () => {
  test("every route, every method, with the other tenant's ids: 404, and nothing changes", async () => {
    const created = await call("globex", "POST", "endpoints", { url: `${origin()}/fail`, types: ["*"] });
    expect(created.status).toBe(200);
    const endpoint = (await created.json()) as { id: string };
    expect((await postel.outbound.endpoints.get(endpoint.id))?.tenantId).toBe("globex");
    const { id: messageId } = await postel.outbound.send({ type: "a.b", data: {}, tenantId: "globex" });
    await postel.drain();
    const [delivery] = await postel.outbound.messages.deliveries(messageId);
    const snapshot = async () =>
      JSON.stringify([
        await postel.outbound.endpoints.get(endpoint.id),
        await postel.outbound.endpoints.secret(endpoint.id),
        await postel.outbound.messages.deliveries(messageId),
        (await postel.outbound.messages.list({ limit: 1000 })).items.length,
      ]);
    const before = await snapshot();
    const ids = { endpoint: endpoint.id, message: messageId, delivery: delivery!.id };
    let tried = 0;
    for (const route of API_ROUTES) {
      const [method, shape] = route.split(" ") as [string, string];
      if (!shape.includes(":id")) continue;
      const parts = shape.split("/");
      const path = parts
        .map((part, i) =>
          part !== ":id"
            ? part
            : parts[0] === "endpoints"
              ? ids.endpoint
              : i === 1
                ? ids.message
                : ids.delivery,
        )
        .join("/");
      const body = { url: `${origin()}/stolen`, since: "2000-01-01T00:00:00Z", type: "a.b", dryRun: false };
      const answer = await call(
        "acme",
        method,
        path,
        method === "GET" || method === "DELETE" ? undefined : body,
      );
      expect(answer.status, route).toBe(404);
      const { error } = (await answer.json()) as { error: { code: string } };
      expect(error.code, route).toMatch(/_NOT_FOUND$/);
      tried++;
    }
    expect(tried).toBe(API_ROUTES.filter((route) => route.includes(":id")).length);
    expect(await snapshot()).toBe(before);
    expect(await (await call("acme", "GET", "endpoints")).json()).toMatchObject({ items: [] });
    expect(await (await call("acme", "GET", "messages")).json()).toMatchObject({ items: [] });
    // The owner can do each of those.
    expect((await call("globex", "GET", `messages/${messageId}/deliveries`)).status).toBe(200);
    const recover = await call("globex", "POST", `endpoints/${endpoint.id}/recover`, {
      since: "2000-01-01T00:00:00Z",
      dryRun: true,
    });
    expect(await recover.json()).toEqual({ wouldReplay: 1 });
  });

  test("writes must be JSON from this site; bad input gets a coded 422 and writes nothing", async () => {
    const form = await call("acme", "POST", "endpoints", undefined, {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(form.status).toBe(403);
    const crossSite = await call(
      "acme",
      "POST",
      "endpoints",
      { url: `${origin()}/ok` },
      { "sec-fetch-site": "cross-site" },
    );
    expect(crossSite.status).toBe(403);
    const evil = await call(
      "acme",
      "POST",
      "endpoints",
      { url: `${origin()}/ok` },
      { origin: "https://evil.example" },
    );
    expect(evil.status).toBe(403);
    const bad = await call("acme", "POST", "endpoints", { url: "not a url" });
    expect(bad.status).toBe(422);
    const privateUrl = createPortal({
      postel: Postel({ outbound: { storage: InMemoryStorage() } }),
      authenticate: () => ({ tenantId: "acme", actor: "a" }),
    });
    const refused = await privateUrl(
      new Request("http://app.example/api/endpoints", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: "http://10.0.0.1/hook" }),
      }),
    );
    expect(refused.status).toBe(422);
    expect((await (await call("acme", "GET", "endpoints")).json()) as { items: unknown[] }).toMatchObject({
      items: [],
    });
  });

  test("refuses to be created without authenticate, with a code and how to fix it", () => {
    let thrown: unknown;
    try {
      createPortal({ postel } as never);
    } catch (error) {
      thrown = error;
    }
    expect(isPostelError(thrown) && thrown.code).toBe("PORTAL_AUTH_REQUIRED");
    expect(() => createPortal({ postel, authenticate: () => null, frameAncestors: ["*"] })).toThrow(
      /frameAncestors/,
    );
  });
});
