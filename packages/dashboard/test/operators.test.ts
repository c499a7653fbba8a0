import { type AuditEntry, type Endpoint, LinearBackoff, type ReplaySelection } from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createDashboard, type Dashboard, type DashboardGrant } from "../src/index.js";
import type { DashboardPostel } from "../src/ops.js";
import { formPost } from "./support/harness.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";
import { deliverAll, type Seeded, seed } from "./support/seed.js";
import { createStorage, type TestStorage } from "./support/storages.js";

type Role = "admin" | "read-only" | "true";
const GRANTS: Record<Role, DashboardGrant | true> = {
  admin: { role: "admin", actor: "ada@example.test" },
  "read-only": { role: "read-only", actor: "rob@example.test" },
  true: true,
};

/** The hidden fields of the form `id` (or the first form) of a page, as a browser would post them. */
function formFields(page: string, id = "confirm"): [string, string][] {
  const form = new RegExp(`<form[^>]*id="${id}"[^>]*>([\\s\\S]*?)</form>`).exec(page)?.[1] ?? "";
  return [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
    m[1]!,
    m[2]!.replaceAll("&quot;", '"').replaceAll("&amp;", "&"),
  ]);
}

describe.each(["postgres", "sqlite"] as const)("operators on %s", (storageName) => {
  let database: TestStorage;
  let receiver: TestReceiver;
  let seeded: Seeded;
  let dashboard: Dashboard;
  let cookie: string;
  let token: string;
  /** Every call of `replay` the dashboard made that was not a dry run, with what it re-enqueued. */
  const replays: { selection: ReplaySelection; replayed: number }[] = [];
  const url = (path: string) => `http://127.0.0.1/postel${path}`;
  const outbound = () => seeded.postel.outbound;

  const get = (path: string, role: Role = "admin") =>
    dashboard(new Request(url(path), { headers: { cookie, "x-role": role } }));
  const post = (path: string, fields: [string, string][] | Record<string, string>, role: Role = "admin") =>
    dashboard(formPost(url(path), fields, { cookie, token, role }));
  const entries = async (): Promise<AuditEntry[]> =>
    (await outbound().auditLog.list({ limit: 1000 })).items.filter((e) => e.source === "dashboard");
  const delivery = async (messageId: string, endpoint: Endpoint) =>
    (await outbound().messages.deliveries(messageId)).find((d) => d.endpointId === endpoint.id)!;
  /** Everything an action could change: endpoints, secrets, deliveries, the audit log. */
  const snapshot = async () =>
    JSON.stringify({
      endpoints: await Promise.all(
        [seeded.good, seeded.broken].map(async (e) => [
          await outbound().endpoints.get(e.id),
          await outbound().endpoints.secret(e.id),
        ]),
      ),
      deliveries: await Promise.all(
        [...seeded.ids, seeded.hostileId].map((id) => outbound().messages.deliveries(id)),
      ),
      audit: (await outbound().auditLog.list({ limit: 1000 })).items,
    });

  beforeAll(async () => {
    database = await createStorage(storageName);
    receiver = await startReceiver();
    seeded = await seed(database.storage, receiver);
    const real = seeded.postel.outbound;
    const ops: DashboardPostel["outbound"] = {
      endpoints: real.endpoints,
      messages: real.messages,
      deadLetters: real.deadLetters,
      failed: real.failed,
      stats: real.stats,
      timeline: real.timeline,
      auditLog: real.auditLog,
      orderingKeys: real.orderingKeys,
      async replay(selection, options) {
        const replayed = await real.replay(selection, options);
        if (!options?.dryRun) replays.push({ selection, replayed: replayed.length });
        return replayed;
      },
    };
    dashboard = createDashboard({
      postel: { outbound: ops },
      basePath: "/postel",
      clock: seeded.clock,
      authorize: (request) => GRANTS[request.headers.get("x-role") as Role] ?? false,
    });
    const first = await dashboard(new Request(url("/endpoints"), { headers: { "x-role": "admin" } }));
    cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await get(`/endpoints/${seeded.good.id}`)).text();
    token = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  });

  afterAll(async () => {
    await seeded?.postel.close();
    await receiver?.close();
    await database?.drop();
  });

  test("reads a dead letter's last attempt as final, not as one more retry to come", async () => {
    const page = await (await get(`/messages/${seeded.ids[0]}`)).text();
    const trail = page.split('<table class="trail">')[1]!;
    const rows = trail.split("<tr>").slice(2);
    const last = rows.filter((row) => row.includes(seeded.broken.url)).at(-1)!;
    expect(last).toContain('<span class="badge bad">dead-lettered</span>');
    expect(last).toContain("retryable, no retries left");
    expect(last).not.toContain(">retryable</span>");
  });

  test("a read-only operator sees every page, without a form, a button or the read-only's secrets", async () => {
    for (const path of [
      "/",
      "/endpoints",
      `/endpoints/${seeded.broken.id}`,
      "/messages",
      `/messages/${seeded.ids[0]}`,
      "/dead-letters",
      "/dead-letters?status=failed",
      "/audit",
      "/live.json",
    ]) {
      const response = await get(path, "read-only");
      expect(response.status, path).toBe(200);
      const text = await response.text();
      expect(text, path).not.toContain('method="post"');
      expect(text, path).not.toContain("Reveal secret");
      expect(text, path).not.toContain("receiver-credential");
      if (!path.endsWith(".json")) expect(text, path).toContain(">read-only</span>");
    }
    // The admin's pages have them.
    expect(await (await get(`/endpoints/${seeded.broken.id}`)).text()).toContain("Reveal secret");
  });

  test("every action POSTed by a read-only operator answers the styled 403 and changes nothing", async () => {
    const before = await snapshot();
    const letter = `${seeded.ids[0]} ${seeded.broken.id}`;
    const routes: [string, Record<string, string> | [string, string][]][] = [
      [`/endpoints/${seeded.good.id}/disable`, {}],
      [`/endpoints/${seeded.good.id}/enable`, {}],
      [`/endpoints/${seeded.good.id}/rotate-secret`, { overlap: "3600000" }],
      [`/endpoints/${seeded.good.id}/reveal-secret`, {}],
      [`/messages/${seeded.ids[0]}/replay`, {}],
      [`/messages/${seeded.ids[0]}/replay`, { endpoint: seeded.broken.id }],
      ["/dead-letters/replay", { only: letter }],
      [
        "/dead-letters/replay",
        [
          ["delivery", letter],
          ["selected", "1"],
        ],
      ],
      ["/dead-letters/replay-all", { endpoint: seeded.broken.id }],
      ["/dead-letters/replay-all", { endpoint: seeded.broken.id, count: "3", nonce: "n".repeat(24) }],
    ];
    for (const [path, fields] of routes) {
      const response = await post(path, fields, "read-only");
      expect(response.status, path).toBe(403);
      const page = await response.text();
      expect(page, path).toContain('<link rel="stylesheet" href="/postel/assets/dashboard.css">');
      expect(page, path).toContain("<h1>Not allowed</h1>");
      expect(page, path).toContain("read-only");
    }
    expect(await snapshot()).toBe(before);
    expect(replays).toEqual([]);
  });

  test("records each action once, as the operator the grant names", async () => {
    const { good, broken, ids } = seeded;
    const expectOne = async (
      run: () => Promise<Response>,
      expected: { action: string; target: string | null; actor?: string; detail?: object },
    ) => {
      const before = (await entries()).length;
      const response = await run();
      expect(response.status, expected.action).toBeLessThan(400);
      const after = await entries();
      expect(after.length, expected.action).toBe(before + 1);
      expect(after[0]).toMatchObject({ actor: "ada@example.test", ...expected });
      return response;
    };
    await expectOne(() => post(`/endpoints/${broken.id}/disable`, {}), {
      action: "endpoint.disable",
      target: broken.id,
    });
    await expectOne(() => post(`/endpoints/${broken.id}/enable`, {}), {
      action: "endpoint.enable",
      target: broken.id,
      detail: { was: "disabled" },
    });
    await expectOne(() => post(`/endpoints/${good.id}/rotate-secret`, { overlap: "3600000" }), {
      action: "secret.rotate",
      target: good.id,
      detail: { overlap: 3_600_000 },
    });
    const reveal = await expectOne(() => post(`/endpoints/${good.id}/reveal-secret`, {}), {
      action: "secret.reveal",
      target: good.id,
    });
    expect(await reveal.text()).toContain(await outbound().endpoints.secret(good.id));
    const one = await delivery(ids[0]!, broken);
    await expectOne(() => post(`/messages/${ids[0]}/replay`, { endpoint: broken.id }), {
      action: "delivery.replay",
      target: one.id,
      detail: { messageId: ids[0], endpointId: broken.id, replayed: 1 },
    });
    await expectOne(() => post(`/messages/${ids[1]}/replay`, {}), {
      action: "message.replay",
      target: ids[1]!,
      detail: { replayed: 2 },
    });
    const row = await delivery(ids[2]!, broken);
    await expectOne(() => post("/dead-letters/replay", { only: `${ids[2]} ${broken.id}` }), {
      action: "delivery.replay",
      target: row.id,
      detail: { replayed: 1 },
    });
    // `true` is an admin without a name: the dashboard's own.
    await expectOne(() => post(`/endpoints/${broken.id}/disable`, {}, "true"), {
      action: "endpoint.disable",
      target: broken.id,
      actor: "dashboard",
    });
    await post(`/endpoints/${broken.id}/enable`, {});
    await deliverAll(seeded.postel, seeded.clock);
    // A bulk replay: counting it records nothing; confirming it records one entry.
    const checked: [string, string][] = [
      ["delivery", `${ids[0]} ${broken.id}`],
      ["delivery", `${ids[1]} ${broken.id}`],
      ["selected", "1"],
    ];
    const count = await snapshot();
    const confirm = await (await post("/dead-letters/replay", checked)).text();
    expect(await snapshot()).toBe(count);
    await expectOne(() => post("/dead-letters/replay", formFields(confirm)), {
      action: "dead-letters.replay",
      target: null,
      detail: { confirmed: 2, fresh: false },
    });
    await deliverAll(seeded.postel, seeded.clock);
    const all = await (await post("/dead-letters/replay-all", { endpoint: broken.id, fresh: "1" })).text();
    await expectOne(() => post("/dead-letters/replay-all", formFields(all)), {
      action: "dead-letters.replay-all",
      target: broken.id,
      detail: { confirmed: 3, fresh: true },
    });
    await deliverAll(seeded.postel, seeded.clock);
  });

  test("replays exactly one delivery of a message from its page", async () => {
    const { good, broken, ids } = seeded;
    const page = await (await get(`/messages/${ids[0]}`)).text();
    expect(page).toContain(`<input type="hidden" name="endpoint" value="${broken.id}">`);
    const kept = await delivery(ids[0]!, good);
    const response = await post(`/messages/${ids[0]}/replay`, { endpoint: broken.id });
    expect(response.headers.get("location")).toBe(`/postel/messages/${ids[0]}?done=replayed&n=1`);
    expect((await delivery(ids[0]!, broken)).status).toBe("pending");
    expect(await delivery(ids[0]!, good)).toEqual(kept);
    await deliverAll(seeded.postel, seeded.clock);
  });

  test("asks with the exact count before a bulk replay, and two submits of one confirmation run it once", async () => {
    const { broken, ids } = seeded;
    for (const id of ids) expect((await delivery(id, broken)).status).toBe("dead-lettered");
    const step = await post("/dead-letters/replay-all", { endpoint: broken.id });
    expect(step.status).toBe(200);
    const page = await step.text();
    expect(page).toContain('data-count="3"');
    expect(page).toContain("<h1>Replay 3 dead letters?</h1>");
    // Counting changed nothing.
    for (const id of ids) expect((await delivery(id, broken)).status).toBe("dead-lettered");
    replays.length = 0;
    const fields = formFields(page);
    const answers = await Promise.all([
      post("/dead-letters/replay-all", fields),
      post("/dead-letters/replay-all", fields),
    ]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 303]);
    const ran = answers.find((a) => a.status === 303)!;
    expect(ran.headers.get("location")).toBe("/postel/dead-letters?done=replayed&n=3");
    const again = await answers.find((a) => a.status === 200)!.text();
    expect(again).toContain("<h1>Already done</h1>");
    expect(again).toContain('href="/postel/audit?action=dead-letters.replay-all"');
    expect(replays).toEqual([
      { selection: { messageIds: expect.any(Array), endpointId: broken.id }, replayed: 3 },
    ]);
    for (const id of ids) expect((await delivery(id, broken)).status).toBe("pending");
    // A third submit, later, still runs nothing.
    expect((await post("/dead-letters/replay-all", fields)).status).toBe(200);
    expect(replays).toHaveLength(1);
    await deliverAll(seeded.postel, seeded.clock);
  });

  test("a confirmation replays no more than it counted, even when more dead letters arrive", async () => {
    const { broken, ids } = seeded;
    await post("/dead-letters/replay", { only: `${ids[0]} ${broken.id}` });
    const page = await (await post("/dead-letters/replay-all", { endpoint: broken.id })).text();
    expect(page).toContain('data-count="2"');
    await seeded.clock.advanceAsync("1s");
    await deliverAll(seeded.postel, seeded.clock);
    replays.length = 0;
    const response = await post("/dead-letters/replay-all", formFields(page));
    expect(response.headers.get("location")).toBe("/postel/dead-letters?done=replayed&n=2");
    expect((await delivery(ids[0]!, broken)).status).toBe("dead-lettered");
    await deliverAll(seeded.postel, seeded.clock);
  });

  test("refuses a rotate overlap the form does not offer with a 400 that lists the valid ones", async () => {
    const before = await snapshot();
    const response = await post(`/endpoints/${seeded.good.id}/rotate-secret`, { overlap: "5" });
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain("no overlap, 1 hour, 24 hours, 7 days");
    expect(page).toContain("INVALID_ARGUMENT");
    expect(await snapshot()).toBe(before);
  });

  test("answers a cursor it did not make with a styled 400 INVALID_CURSOR on every listing", async () => {
    for (const path of ["/messages", "/endpoints", "/dead-letters", "/audit"]) {
      const response = await get(`${path}?cursor=garbage%00`);
      expect(response.status, path).toBe(400);
      const page = await response.text();
      expect(page, path).toContain('<code id="error-code">INVALID_CURSOR</code>');
      expect(page, path).toContain('<link rel="stylesheet" href="/postel/assets/dashboard.css">');
      expect(page, path).toContain("<h1>");
    }
    const live = await get("/live.json?since=garbage&cursor=garbage");
    expect(live.status).toBe(200);
    const missing = await get("/nothing.json");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/json");
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
  });

  test("shows a breaker past its cooldown as waiting for traffic, not a probe time in the past", async () => {
    const flaky = await outbound().endpoints.create({
      url: "http://127.0.0.1:1/probe",
      types: ["probe.*"],
      circuitBreaker: { minimumVolume: 1, threshold: 0.5, cooldown: "1m" },
    });
    await outbound().send({ type: "probe.check", data: {} });
    await seeded.postel.drain();
    const open = await outbound().endpoints.get(flaky.id);
    expect(open?.state).toBe("circuit-open");
    const ahead = await (await get(`/endpoints/${flaky.id}`)).text();
    expect(ahead).toContain("next probe");
    await seeded.clock.advanceAsync("2m");
    for (const path of [`/endpoints/${flaky.id}`, "/endpoints"]) {
      const page = await (await get(path)).text();
      expect(page, path).toContain("waiting for traffic: the next delivery probes it");
      expect(page, path).not.toContain("next probe");
    }
    await outbound().endpoints.delete(flaky.id);
  });

  test("tells a message that matched no endpoint from one not fanned out yet", async () => {
    const nobody = await outbound().send({
      type: "nobody.listens",
      data: {},
      tenantId: "tenant-without-endpoints",
    });
    expect(await (await get(`/messages/${nobody.id}`)).text()).toContain("Not fanned out yet.");
    await seeded.postel.drain();
    const message = await outbound().messages.get(nobody.id);
    expect(message?.status).toBe("dispatched");
    expect(await outbound().messages.deliveries(nobody.id)).toEqual([]);
    const page = await (await get(`/messages/${nobody.id}`)).text();
    expect(page).toContain("Matched no endpoint");
    expect(page).not.toContain("Not fanned out yet.");
  });

  test("lets every one of 250 endpoints be picked in the dead-letter filter", async () => {
    const created: Endpoint[] = [];
    for (let i = 0; i < 250; i++) {
      created.push(
        await outbound().endpoints.create({
          url: `https://receiver-${i}.example.com/hooks`,
          types: ["never.sent"],
          retryPolicy: LinearBackoff({ maxAttempts: 1, step: "1s", jitter: 0 }),
        }),
      );
    }
    const page = await (await get("/dead-letters")).text();
    expect(page).toContain('<input name="endpoint" list="endpoint-ids"');
    const datalist = page.split('<datalist id="endpoint-ids">')[1]!.split("</datalist>")[0]!;
    for (const endpoint of [seeded.broken, ...created]) {
      expect(datalist).toContain(`<option value="${endpoint.id}">`);
    }
    const last = created.at(-1)!;
    const filtered = await (await get(`/dead-letters?endpoint=${last.id}`)).text();
    expect(filtered).toContain(`value="${last.id}" placeholder`);
    expect(filtered).toContain("No dead letters match.");
  });
});
