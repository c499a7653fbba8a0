import { isPostelError, ManualClock } from "@postel/core";
import { describe, expect, test } from "vitest";
import { createPortal, PAGE_ROUTES, type PortalOptions } from "../src/index.js";
import { outboxWithReceiver } from "./support/outbox.js";
import { PortalVisitor } from "./support/session.js";
import { catalog } from "./support/catalog.js";

const clock = new ManualClock(Date.UTC(2026, 5, 1));
const { postel, origin, received } = outboxWithReceiver(catalog, clock);
const SECRET = "portal-test-secret-0123456789abcdef";

function portalWith(options: Partial<PortalOptions> = {}) {
  return createPortal({
    postel,
    basePath: "/webhooks",
    secret: SECRET,
    clock,
    limits: { testEventsPerHour: 3 },
    ...options,
  });
}
const portal = portalWith();

async function signedIn(tenantId: string, actor = `${tenantId}-admin`) {
  const visitor = new PortalVisitor(portal);
  const answer = await visitor.signIn(await portal.link({ tenantId, actor }));
  expect(answer.status).toBe(303);
  return visitor;
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isPostelError(error) ? error.code : String(error);
  }
  return undefined;
}

describe("portal links", () => {
  test("a link is exchanged once for a session cookie; the token never appears in a page", async () => {
    const link = await portal.link({ tenantId: "acme", actor: "ada@acme.test" });
    expect(link).toMatch(/^\/webhooks\/sign-in#token=v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const visitor = new PortalVisitor(portal);
    const page = await visitor.get("/webhooks/sign-in");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<script src="/webhooks/assets/sign-in.js" defer></script>');
    expect(page.text).not.toContain("v1.");
    const script = await visitor.get("/webhooks/assets/sign-in.js");
    expect(script.text).toContain("history.replaceState");

    const exchanged = await visitor.signIn(link);
    expect(exchanged.status).toBe(303);
    expect(exchanged.location).toBe("/webhooks/");
    const cookie = exchanged.response.headers
      .getSetCookie()
      .find((c) => c.startsWith("postel_portal_session="));
    expect(cookie).toMatch(/; Path=\/webhooks; Max-Age=28800; HttpOnly; SameSite=Lax$/);
    const home = await visitor.get("/webhooks/");
    expect(home.status).toBe(200);
    expect(home.text).toContain("ada@acme.test");

    const again = await new PortalVisitor(portal).signIn(link);
    expect(again.status).toBe(403);
    expect(again.text).toContain("already used");
    expect(again.response.headers.getSetCookie()).toEqual([]);
    const entries = await postel.outbound.auditLog.list({ tenantId: "acme", action: "portal.sign-in" });
    expect(entries.items.map((e) => e.actor)).toEqual(["ada@acme.test"]);
  });

  test("expired, tampered, cross-site and wrong-kind tokens are refused, and a refused one is not spent", async () => {
    const short = await portal.link({ tenantId: "acme", ttl: "5m" });
    await clock.advanceAsync("5m");
    const expired = await new PortalVisitor(portal).signIn(short);
    expect([expired.status, expired.text.includes("expired")]).toEqual([403, true]);

    const link = await portal.link({ tenantId: "acme" });
    // Another tenant in the claims, the signature kept.
    const [head, claims, mac] = link.split(".") as [string, string, string];
    const forged = Buffer.from(
      Buffer.from(claims, "base64url").toString().replace('"t":"acme"', '"t":"globex"'),
    ).toString("base64url");
    const tampered = `${head}.${forged}.${mac}`;
    expect((await new PortalVisitor(portal).signIn(tampered)).text).toContain("not valid");

    const visitor = new PortalVisitor(portal);
    await visitor.get("/webhooks/sign-in");
    const token = new URLSearchParams(link.split("#")[1]).get("token")!;
    const crossSite = await visitor.post(
      "/webhooks/sign-in",
      { token },
      { headers: { "sec-fetch-site": "cross-site" } },
    );
    expect(crossSite.status).toBe(403);
    // Not spent by the refused attempt: the real one still signs in.
    expect((await visitor.post("/webhooks/sign-in", { token })).status).toBe(303);

    // A session cookie is not a link, and a link is not a session.
    const session = visitor.cookies.get("postel_portal_session")!;
    expect((await new PortalVisitor(portal).signIn(`/webhooks/sign-in#token=${session}`)).status).toBe(403);
    const asSession = new PortalVisitor(portal);
    asSession.cookies.set("postel_portal_session", token);
    expect((await asSession.get("/webhooks/")).status).toBe(403);
  });

  test("a session ends with its ttl, on sign-out, and when its key is dropped", async () => {
    const visitor = await signedIn("acme");
    expect((await visitor.get("/webhooks/")).status).toBe(200);
    const rotated = portalWith({ secret: ["another-portal-secret-0123456789abcdef", SECRET] });
    const revoked = portalWith({ secret: "another-portal-secret-0123456789abcdef" });
    const cookie = `postel_portal_session=${visitor.cookies.get("postel_portal_session")}`;
    const get = (p: typeof portal) => p(new Request("http://app.example/webhooks/", { headers: { cookie } }));
    expect((await get(rotated)).status).toBe(200);
    expect((await get(revoked)).status).toBe(403);

    await clock.advanceAsync("8h");
    expect((await visitor.get("/webhooks/")).status).toBe(403);

    const other = await signedIn("acme");
    await other.get("/webhooks/");
    const out = await other.post("/webhooks/sign-out");
    expect([out.status, out.location]).toEqual([303, "/webhooks/signed-out"]);
    expect(other.cookies.has("postel_portal_session")).toBe(false);
    expect((await other.get("/webhooks/")).status).toBe(403);
  });

  test("bad options and bad links are coded errors before anything runs", async () => {
    expect(codeOf(() => createPortal({ postel } as PortalOptions))).toBe("PORTAL_AUTH_REQUIRED");
    expect(codeOf(() => createPortal({ postel, secret: "short" }))).toBe("PORTAL_INVALID_OPTIONS");
    expect(codeOf(() => portalWith({ theme: { logoUrl: "https://cdn.example/logo.png" } }))).toBe(
      "PORTAL_INVALID_OPTIONS",
    );
    expect(codeOf(() => portalWith({ theme: { colors: { accent: "red; background: url(x)" } } }))).toBe(
      "PORTAL_INVALID_OPTIONS",
    );
    expect(codeOf(() => portalWith({ sessionTtl: "90d" }))).toBe("PORTAL_INVALID_OPTIONS");
    const noLinks = createPortal({ postel, authenticate: () => null });
    await expect(noLinks.link({ tenantId: "acme" })).rejects.toMatchObject({ code: "PORTAL_LINKS_DISABLED" });
    await expect(portal.link({ tenantId: "acme", ttl: "2d" })).rejects.toMatchObject({
      code: "PORTAL_INVALID_LINK",
    });
    await expect(portal.link({ tenantId: "" })).rejects.toMatchObject({ code: "PORTAL_INVALID_LINK" });
  });
});

describe("the portal's pages", () => {
  test("a tenant adds an endpoint from the catalog, reveals and rotates its secret, tests, replays and recovers", async () => {
    const acme = await signedIn("acme", "ada@acme.test");
    const form = await acme.get("/webhooks/endpoints/new");
    expect(form.text).toContain('value="order.created"');
    expect(form.text).toContain("An order was paid &lt;b&gt;in full&lt;/b&gt;.");
    expect(form.text).toContain("Deprecated: use invoice.issued");
    // An ungrouped type is listed before the groups, never under the heading of one.
    expect(form.text.indexOf('value="invoice.sent"')).toBeLessThan(form.text.indexOf("<h3>orders</h3>"));
    const created = await acme.post("/webhooks/endpoints", {
      url: `${origin()}/fail`,
      description: "Billing server",
      types: ["order.created", "order.paid"],
    });
    expect(created.status).toBe(303);
    const id = /\/webhooks\/endpoints\/([^?]+)\?done=created$/.exec(created.location ?? "")?.[1];
    expect(id).toBeDefined();
    const endpoint = await postel.outbound.endpoints.get(id!);
    expect([endpoint?.tenantId, endpoint?.types]).toEqual(["acme", ["order.created", "order.paid"]]);

    const detail = await acme.get(`/webhooks/endpoints/${id}`);
    expect(detail.text).not.toContain("whsec_");
    const revealed = await acme.post(`/webhooks/endpoints/${id}/reveal-secret`);
    expect(revealed.status).toBe(200);
    const secret = /<code class="secret"[^>]*>(whsec_[^<]+)<\/code>/.exec(revealed.text)?.[1];
    expect(secret).toBe(await postel.outbound.endpoints.secret(id!));
    expect(revealed.response.headers.get("cache-control")).toBe("no-store");
    const rotated = await acme.post(`/webhooks/endpoints/${id}/rotate-secret`, { overlap: "1h" });
    const newSecret = /<code class="secret"[^>]*>(whsec_[^<]+)<\/code>/.exec(rotated.text)?.[1];
    expect(newSecret).not.toBe(secret);
    expect(newSecret).toBe(await postel.outbound.endpoints.secret(id!));

    const refusedType = await acme.post(`/webhooks/endpoints/${id}`, {
      url: `${origin()}/fail`,
      types: ["refund.*"],
    });
    expect(refusedType.status).toBe(422);
    expect(refusedType.text).toContain('value="refund.*"');

    const tested = await acme.post(`/webhooks/endpoints/${id}/test`, { type: "order.created" });
    expect(tested.location).toBe(`/webhooks/endpoints/${id}?done=tested`);
    await postel.drain();
    const arrived = received.filter((r) => r.path === "/fail");
    expect(arrived.at(-1)?.body).toContain('"type":"order.created"');

    const messages = await acme.get("/webhooks/messages");
    const messageId = /href="\/webhooks\/messages\/(msg_[^"]+)"/.exec(messages.text)?.[1];
    expect(messageId).toBeDefined();
    const trail = await acme.get(`/webhooks/messages/${messageId}`);
    expect(trail.text).toContain("HTTP 500");
    expect(trail.text).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt; receiver error");
    expect(trail.text).not.toContain("<img src=x");
    expect(trail.text).toMatch(/webhook-signature: v1,••••••/);
    const deliveryId = /\/deliveries\/(dlv_[^/]+)\/replay/.exec(trail.text)?.[1];
    const replayed = await acme.post(`/webhooks/messages/${messageId}/deliveries/${deliveryId}/replay`);
    expect(replayed.location).toBe(`/webhooks/messages/${messageId}?done=replayed&n=1`);
    await postel.drain();
    expect((await postel.outbound.messages.attempts(messageId!)).length).toBe(2);

    const since = new Date(clock.now() - 3_600_000).toISOString().slice(0, 16);
    const count = await acme.post(`/webhooks/endpoints/${id}/recover`, { since });
    expect(count.text).toMatch(/<strong>1<\/strong> delivery/);
    const recovered = await acme.post(`/webhooks/endpoints/${id}/recover`, {
      since: new Date(Date.parse(`${since}Z`)).toISOString(),
      confirm: "1",
    });
    expect(recovered.location).toBe(`/webhooks/endpoints/${id}?done=recovered&n=1`);

    const activity = await acme.get("/webhooks/activity");
    for (const what of [
      "added an endpoint",
      "revealed a signing secret",
      "rotated a signing secret",
      "sent a test event",
      "sent a delivery again",
      "recovered failed deliveries",
    ])
      expect(activity.text).toContain(what);
    expect(activity.text).toContain("ada@acme.test");
  });

  test("every page and form, with another tenant's ids, is a 404 and changes nothing", async () => {
    const globex = await signedIn("globex");
    await globex.get("/webhooks/endpoints/new");
    const made = await globex.post("/webhooks/endpoints", { url: `${origin()}/fail`, types: ["*"] });
    const endpointId = /endpoints\/([^?]+)\?/.exec(made.location!)![1]!;
    const { id: messageId } = await postel.outbound.send({
      type: "order.created",
      data: {},
      tenantId: "globex",
    });
    await postel.drain();
    const [delivery] = await postel.outbound.messages.deliveries(messageId);
    const snapshot = async () =>
      JSON.stringify([
        await postel.outbound.endpoints.get(endpointId),
        await postel.outbound.endpoints.secret(endpointId),
        await postel.outbound.messages.deliveries(messageId),
        (await postel.outbound.auditLog.list({ tenantId: "globex", limit: 200 })).items.length,
      ]);
    const before = await snapshot();
    const acme = await signedIn("acme");
    await acme.get("/webhooks/");
    let tried = 0;
    for (const route of PAGE_ROUTES) {
      const [method, shape] = route.split(" ") as [string, string];
      if (!shape.includes(":id")) continue;
      let n = 0;
      const path = shape.replace(/:id/g, () =>
        n++ === 0 ? (shape.startsWith("/messages") ? messageId : endpointId) : delivery!.id,
      );
      const answer =
        method === "GET"
          ? await acme.get(`/webhooks${path}`)
          : await acme.post(`/webhooks${path}`, {
              url: "https://example.com/x",
              types: ["*"],
              confirm: "1",
              since: "2026-01-01T00:00",
              type: "order.created",
            });
      expect([route, answer.status]).toEqual([route, 404]);
      expect(answer.text).not.toContain(endpointId);
      tried++;
    }
    expect(tried).toBe(PAGE_ROUTES.filter((r) => r.includes(":id")).length);
    expect(await snapshot()).toBe(before);
  });

  test("what a tenant or a receiver controls renders as text", async () => {
    const evil = '"><script>alert("x")</script><img src=x onerror=alert(1)>';
    const visitor = await signedIn("initech", evil);
    await visitor.get("/webhooks/endpoints/new");
    const made = await visitor.post("/webhooks/endpoints", {
      url: `${origin()}/ok?q="><script>alert(1)</script>`,
      description: evil,
      types: ["*"],
      filter: JSON.stringify({ "data.note": { $eq: evil } }),
    });
    expect(made.status).toBe(303);
    const id = /endpoints\/([^?]+)\?/.exec(made.location!)![1]!;
    await postel.outbound.send({ type: "order.created", data: { note: evil }, tenantId: "initech" });
    await postel.drain();
    const pages = [
      await visitor.get("/webhooks/"),
      await visitor.get(`/webhooks/endpoints/${id}`),
      await visitor.get(`/webhooks/endpoints/${id}/edit`),
      await visitor.get("/webhooks/messages"),
      await visitor.get("/webhooks/activity"),
    ];
    const messageId = /href="\/webhooks\/messages\/(msg_[^"]+)"/.exec(pages[3]!.text)?.[1];
    pages.push(await visitor.get(`/webhooks/messages/${messageId}`));
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect(page.text).not.toMatch(/<script>alert|<img src=x/);
    }
    expect(pages[1]!.text).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
  });

  test("forms without the portal's token, or from another site, are refused and change nothing", async () => {
    const visitor = await signedIn("hooli");
    await visitor.get("/webhooks/endpoints/new");
    const noToken = await visitor.post(
      "/webhooks/endpoints",
      { url: `${origin()}/ok`, types: ["*"] },
      { csrf: false },
    );
    expect(noToken.status).toBe(403);
    const crossSite = await visitor.post(
      "/webhooks/endpoints",
      { url: `${origin()}/ok`, types: ["*"] },
      { headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" } },
    );
    expect(crossSite.status).toBe(403);
    expect((await postel.outbound.endpoints.list({ tenantId: "hooli" })).items).toEqual([]);
  });

  test("test events are limited per hour, counted from the audit log; time moving on frees them", async () => {
    const visitor = await signedIn("umbrella");
    await visitor.get("/webhooks/endpoints/new");
    const made = await visitor.post("/webhooks/endpoints", { url: `${origin()}/ok`, types: ["*"] });
    const page = made.location!.replace(/\?.*/, "");
    await visitor.get(page);
    for (let i = 0; i < 3; i++)
      expect((await visitor.post(`${page}/test`, { type: "order.paid" })).status).toBe(303);
    const limited = await visitor.post(`${page}/test`, { type: "order.paid" });
    expect(limited.status).toBe(429);
    expect(limited.text).toContain("3 test events in the last hour");
    await clock.advanceAsync("61m");
    expect((await visitor.post(`${page}/test`, { type: "order.paid" })).status).toBe(303);
  });

  test("framing: refused by default, allowed only for the origins the app names", async () => {
    const visitor = await signedIn("acme");
    const page = await visitor.get("/webhooks/");
    expect(page.response.headers.get("x-frame-options")).toBe("DENY");
    expect(page.response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const framed = portalWith({
      frameAncestors: ["https://app.example.com"],
      authenticate: () => ({ tenantId: "acme", actor: "a" }),
    });
    const answer = await framed(new Request("http://app.example/webhooks/"));
    expect(answer.headers.get("x-frame-options")).toBeNull();
    expect(answer.headers.get("content-security-policy")).toContain(
      "frame-ancestors https://app.example.com",
    );
  });

  test("the theme's colours and logo go into the portal's own stylesheet and header", async () => {
    const themed = portalWith({
      authenticate: () => ({ tenantId: "acme", actor: "a" }),
      theme: {
        title: "Acme Hooks",
        logoUrl: "/static/logo.svg",
        colors: { accent: "#ff5500", bg: "rgb(250 250 250)" },
      },
    });
    const home = await (await themed(new Request("http://app.example/webhooks/"))).text();
    expect(home).toContain('<img src="/static/logo.svg" alt="">Acme Hooks');
    const css = await (await themed(new Request("http://app.example/webhooks/assets/portal.css"))).text();
    expect(css).toContain(":root { --accent: #ff5500; --bg: rgb(250 250 250); }");
  });
});
