import {
  InMemoryStorage,
  isPostelError,
  LinearBackoff,
  ManualClock,
  Postel,
  type Storage,
} from "@postel/core";
import { afterAll, describe, expect, test } from "vitest";
import { CONTENT_SECURITY_POLICY, createDashboard, type DashboardOptions } from "../src/index.js";

const clock = new ManualClock();
const postel = Postel({ outbound: { storage: InMemoryStorage() }, clock });
afterAll(() => postel.close());
const allow = () => true;
const dashboard = createDashboard({ postel, authorize: allow, basePath: "/ops/postel", clock });
const url = (path: string) => `http://127.0.0.1/ops/postel${path}`;

async function formToken(): Promise<{ cookie: string; token: string }> {
  const page = await dashboard(new Request(url("/endpoints")));
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  const endpoint = await postel.outbound.endpoints.create({ url: "https://example.com/hook" });
  const detail = await (
    await dashboard(new Request(url(`/endpoints/${endpoint.id}`), { headers: { cookie } }))
  ).text();
  return { cookie, token: /name="_csrf" value="([^"]+)"/.exec(detail)![1]! };
}

describe("createDashboard", () => {
  test("refuses to be created without authorize", () => {
    const options = { postel } as unknown as DashboardOptions;
    let thrown: unknown;
    try {
      createDashboard(options);
    } catch (error) {
      thrown = error;
    }
    expect(isPostelError(thrown) && thrown.code).toBe("DASHBOARD_AUTHORIZE_REQUIRED");
    expect(String(thrown)).toContain("authorize: (request) =>");
  });

  test("refuses a basePath that is not a path and a short CSRF secret", () => {
    expect(() => createDashboard({ postel, authorize: allow, basePath: "postel" })).toThrow(/basePath/);
    expect(() => createDashboard({ postel, authorize: allow, csrfSecret: "short" })).toThrow(/32 characters/);
  });

  test("answers 403 when authorize says no, and passes a Response of authorize's through", async () => {
    const closed = createDashboard({ postel, authorize: () => false });
    const refused = await closed(new Request("http://127.0.0.1/messages"));
    expect(refused.status).toBe(403);
    const login = createDashboard({
      postel,
      authorize: () => Response.redirect("http://127.0.0.1/login", 302),
    });
    expect((await login(new Request("http://127.0.0.1/"))).headers.get("location")).toBe(
      "http://127.0.0.1/login",
    );
  });

  test("sends the strict security headers on pages, JSON and assets", async () => {
    for (const path of [
      "/",
      "/endpoints",
      "/messages",
      "/dead-letters",
      "/audit",
      "/live.json",
      "/assets/live.js",
    ]) {
      const response = await dashboard(new Request(url(path)));
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    }
    expect((await dashboard(new Request(url("/messages")))).headers.get("cache-control")).toBe("no-store");
  });

  test("shows the audit log newest first, filtered by tenant and action, every field as text", async () => {
    await postel.outbound.auditLog.record({
      tenantId: "acme",
      actor: "ada",
      action: "endpoint.create",
      target: "ep_1",
      source: "portal",
    });
    await clock.advanceAsync("1s");
    await postel.outbound.auditLog.record({
      tenantId: "globex",
      actor: '<script>alert("actor")</script>',
      action: "secret.reveal",
      target: "ep_2",
      source: "portal",
      detail: { note: "<b>x</b>" },
    });
    const all = (await (await dashboard(new Request(url("/audit")))).text()).split("<tbody>")[1]!;
    expect(all.indexOf("secret.reveal")).toBeLessThan(all.indexOf("endpoint.create"));
    expect(all).toContain("&lt;script&gt;alert(&quot;actor&quot;)&lt;/script&gt;");
    expect(all).not.toContain("<script>alert");
    expect(all).not.toContain("<b>x</b>");
    const acme = (await (await dashboard(new Request(url("/audit?tenant=acme")))).text()).split(
      "<tbody>",
    )[1]!;
    expect(acme).toContain("endpoint.create");
    expect(acme).not.toContain("secret.reveal");
    const reveals = await (await dashboard(new Request(url("/audit?action=secret.reveal")))).text();
    expect(reveals).toContain("ep_2");
    expect(reveals).not.toContain("ep_1");
  });

  test("answers 404 outside its basePath and for unknown pages", async () => {
    expect((await dashboard(new Request("http://127.0.0.1/other"))).status).toBe(404);
    expect((await dashboard(new Request(url("/nope")))).status).toBe(404);
    expect((await dashboard(new Request(url("/messages/msg_missing")))).status).toBe(404);
  });

  test("runs a POST with the page's token and cookie, and refuses it cross-site or without them", async () => {
    const { cookie, token } = await formToken();
    const [endpoint] = (await postel.outbound.endpoints.list()).items;
    const post = (headers: Record<string, string>, body: string) =>
      dashboard(
        new Request(url(`/endpoints/${endpoint!.id}/disable`), {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
          body,
        }),
      );
    expect((await post({ cookie }, "")).status).toBe(403);
    expect((await post({}, `_csrf=${token}`)).status).toBe(403);
    expect((await post({ cookie: "postel_dashboard_csrf=" + "x".repeat(43) }, `_csrf=${token}`)).status).toBe(
      403,
    );
    expect((await post({ cookie, origin: "https://evil.example" }, `_csrf=${token}`)).status).toBe(403);
    expect((await post({ cookie, "sec-fetch-site": "cross-site" }, `_csrf=${token}`)).status).toBe(403);
    expect((await postel.outbound.endpoints.get(endpoint!.id))?.state).toBe("active");
    const done = await post(
      { cookie, origin: "http://127.0.0.1", "sec-fetch-site": "same-origin" },
      `_csrf=${token}`,
    );
    expect(done.status).toBe(303);
    expect((await postel.outbound.endpoints.get(endpoint!.id))?.state).toBe("disabled");
  });

  test("a grant it cannot read lets nobody in, and onError says why", async () => {
    for (const grant of [{ role: "owner" }, { role: "admin", actor: "" }, {}]) {
      const errors: unknown[] = [];
      const strict = createDashboard({
        postel,
        authorize: () => grant as never,
        onError: (error) => errors.push(error),
      });
      const response = await strict(new Request("http://127.0.0.1/messages"));
      expect(response.status).toBe(500);
      expect(await response.text()).not.toContain("grant");
      expect(isPostelError(errors[0]) && errors[0].code).toBe("DASHBOARD_INVALID_GRANT");
    }
  });

  test("without health buckets, the live view keeps its figures and says why it draws no timeline", async () => {
    const memory = InMemoryStorage();
    const { healthBuckets: _, ...operations } = memory.operations;
    const bare = Postel({
      outbound: { storage: { ...memory, operations, name: "custom" } as Storage<unknown> },
      clock,
    });
    try {
      const endpoint = await bare.outbound.endpoints.create({ url: "https://example.com/hook" });
      const open = createDashboard({ postel: bare, authorize: () => true, clock });
      const page = await open(new Request("http://127.0.0.1/"));
      expect(page.status).toBe(200);
      const text = await page.text();
      expect(text).toContain("keeps no health buckets");
      expect(text).not.toContain('id="chart-throughput"');
      expect(text).toContain('id="chart-backlog"');
      const live = (await (await open(new Request("http://127.0.0.1/live.json"))).json()) as object;
      expect(live).toMatchObject({ timeline: null, failing: [] });
      expect((await open(new Request(`http://127.0.0.1/endpoints/${endpoint.id}`))).status).toBe(200);
    } finally {
      await bare.close();
    }
  });

  test("without an audit log, actions still run and a confirmation still runs once in this process", async () => {
    const { auditLog: _, ...withoutAuditLog } = InMemoryStorage();
    const local = new ManualClock();
    const bare = Postel({
      outbound: {
        storage: { ...withoutAuditLog, name: "custom" } as Storage<unknown>,
        http: { allowPrivateNetworks: true },
      },
      clock: local,
    });
    try {
      const endpoint = await bare.outbound.endpoints.create({
        url: "http://127.0.0.1:1/hook",
        retryPolicy: LinearBackoff({ maxAttempts: 1, step: "1s", jitter: 0 }),
      });
      for (let i = 0; i < 2; i++) await bare.outbound.send({ type: "order.created", data: { i } });
      for (let round = 0; round < 4; round++) {
        await bare.drain();
        local.advance("2s");
      }
      expect((await bare.outbound.deadLetters.list()).items).toHaveLength(2);
      const open = createDashboard({ postel: bare, authorize: () => true, clock: local });
      const first = await open(new Request("http://127.0.0.1/dead-letters"));
      const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
      const token = /name="_csrf" value="([^"]+)"/.exec(await first.text())![1]!;
      const post = (path: string, fields: [string, string][]) =>
        open(
          new Request(`http://127.0.0.1${path}`, {
            method: "POST",
            headers: {
              cookie,
              "content-type": "application/x-www-form-urlencoded",
              "sec-fetch-site": "same-origin",
            },
            body: new URLSearchParams([...fields, ["_csrf", token]]),
          }),
        );
      expect((await post(`/endpoints/${endpoint.id}/disable`, [])).status).toBe(303);
      expect((await bare.outbound.endpoints.get(endpoint.id))?.state).toBe("disabled");
      await post(`/endpoints/${endpoint.id}/enable`, []);
      const confirm = await (await post("/dead-letters/replay-all", [])).text();
      expect(confirm).toContain('data-count="2"');
      const fields = [...confirm.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
        .map((m): [string, string] => [m[1]!, m[2]!])
        .filter(([name]) => name !== "_csrf");
      const answers = await Promise.all([
        post("/dead-letters/replay-all", fields),
        post("/dead-letters/replay-all", fields),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 303]);
      expect((await bare.outbound.deadLetters.list()).items).toHaveLength(0);
      expect(await (await open(new Request("http://127.0.0.1/audit"))).text()).toContain("has no audit log");
    } finally {
      await bare.close();
    }
  });
});
