import { type Endpoint, LinearBackoff } from "@postel/core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createDashboard, type Dashboard } from "../src/index.js";
import { ARTIFACTS, launchChromium, serveAttacker, serveDashboard } from "./support/browser.js";
import { HOSTILE } from "./support/hostile.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";
import { deliverAll, type Seeded, seed } from "./support/seed.js";
import { createStorage, type TestStorage } from "./support/storages.js";

describe.each(["postgres", "sqlite"] as const)("the dashboard in Chromium on %s", (storageName) => {
  let browser: Browser;
  let database: TestStorage;
  let receiver: TestReceiver;
  let seeded: Seeded;
  let dashboard: Dashboard;
  let server: { origin: string; close(): Promise<void> };
  let context: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const base = () => `${server.origin}/postel`;
  const shot = (name: string) =>
    page.screenshot({ path: `${ARTIFACTS}${storageName}-${name}.png`, fullPage: true });

  beforeAll(async () => {
    browser = await launchChromium();
    database = await createStorage(storageName);
    receiver = await startReceiver();
    seeded = await seed(database.storage, receiver);
    dashboard = createDashboard({
      postel: seeded.postel,
      basePath: "/postel",
      clock: seeded.clock,
      authorize: (request) => (request.headers.get("cookie") ?? "").includes("operator=yes"),
    });
    server = await serveDashboard(dashboard);
    context = await browser.newContext();
    await context.addCookies([{ name: "operator", value: "yes", url: server.origin }]);
    page = await context.newPage();
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await seeded?.postel.close();
    await receiver?.close();
    await database?.drop();
  });

  test("lists endpoints with hostile descriptions and metadata shown as text, never run", async () => {
    await page.goto(`${base()}/endpoints`);
    await expect(page.locator("td", { hasText: HOSTILE.description }).count()).resolves.toBe(1);
    await expect(page.locator("tbody tr").count()).resolves.toBe(2);
    await expect(page.locator("img").count()).resolves.toBe(0);
    await shot("endpoints");
    await page.goto(`${base()}/endpoints/${seeded.good.id}`);
    await expect(page.locator("pre.json", { hasText: "</pre><script>" }).count()).resolves.toBe(1);
    await expect(page.content()).resolves.not.toContain("receiver-credential");
    await expect(page.locator("script:not([src])").count()).resolves.toBe(0);
    await shot("endpoint");
    expect(dialogs).toEqual([]);
  });

  test("filters messages by status and type, and finds one by id", async () => {
    await page.goto(`${base()}/messages`);
    await expect(page.locator("tbody tr").count()).resolves.toBe(4);
    await shot("messages");
    await page.selectOption("select[name=status]", "dead-lettered");
    await page.click("form.filters button");
    await expect(page.locator("tbody tr").count()).resolves.toBe(3);
    await page.fill("input[name=type]", "invoice.paid");
    await page.selectOption("select[name=status]", "");
    await page.click("form.filters button");
    await expect(page.locator("tbody tr").count()).resolves.toBe(1);
    await expect(page.locator("td", { hasText: HOSTILE.tenant }).count()).resolves.toBe(1);
    await page.fill("input[name=type]", "");
    await page.fill("input[name=id]", seeded.ids[0]!);
    await page.click("form.filters button");
    expect(new URL(page.url()).pathname).toBe(`/postel/messages/${seeded.ids[0]}`);
    expect(dialogs).toEqual([]);
  });

  test("pages through messages with a keyset cursor", async () => {
    await page.goto(`${base()}/messages`);
    const all = await page.locator("tbody tr td:first-child").allTextContents();
    await page.goto(`${base()}/messages?limit=3`);
    await expect(page.locator("tbody tr td:first-child").allTextContents()).resolves.toEqual(all.slice(0, 3));
    await page.click("a[rel=next]");
    await expect(page.locator("tbody tr td:first-child").allTextContents()).resolves.toEqual(all.slice(3));
    await expect(page.locator("a[rel=next]").count()).resolves.toBe(0);
  });

  test("opens a message's attempt trail, the hostile response snippet and payload inert", async () => {
    await page.goto(`${base()}/messages/${seeded.ids[0]}`);
    await expect(page.locator("table.trail tbody tr").count()).resolves.toBe(3);
    await expect(page.locator("pre.snippet", { hasText: HOSTILE.snippet }).count()).resolves.toBe(2);
    await expect(
      page.locator("pre.json", { hasText: '"comment": "<img src=x onerror=alert(' }).count(),
    ).resolves.toBe(1);
    await shot("message");
    expect(dialogs).toEqual([]);
  });

  test("replays one dead letter and then sees it delivered", async () => {
    await page.goto(`${base()}/dead-letters`);
    await expect(page.locator("tbody tr").count()).resolves.toBe(3);
    await shot("dead-letters");
    receiver.fix();
    const target = seeded.ids[1]!;
    await page.click(`button[name=only][value="${target} ${seeded.broken.id}"]`);
    await expect(page.locator(".notice").textContent()).resolves.toContain("Replayed 1 delivery");
    await expect(page.locator("tbody tr").count()).resolves.toBe(2);
    await deliverAll(seeded.postel, seeded.clock);
    await page.goto(`${base()}/messages/${target}`);
    await expect(page.locator("dd .badge").first().textContent()).resolves.toBe("dispatched");
    await expect(page.locator("table.trail tbody tr").last().locator(".badge").textContent()).resolves.toBe(
      "success",
    );
    expect(receiver.delivered.get("/broken")).toHaveLength(1);
  });

  test("replays the checked dead letters with a fresh webhook-id", async () => {
    await page.goto(`${base()}/dead-letters`);
    const before = (await seeded.postel.outbound.messages.deliveries(seeded.ids[0]!)).find(
      (d) => d.endpointId === seeded.broken.id,
    )!;
    await page.check(`input[name=delivery][value="${seeded.ids[0]} ${seeded.broken.id}"]`);
    await page.check("#selection input[name=fresh]");
    await page.click("button[name=selected]");
    // It asks first, with the count, and has changed nothing yet.
    await expect(page.locator("h1").textContent()).resolves.toBe("Replay 1 dead letter?");
    expect(
      (await seeded.postel.outbound.messages.deliveries(seeded.ids[0]!)).find(
        (d) => d.endpointId === seeded.broken.id,
      )?.status,
    ).toBe("dead-lettered");
    await shot("confirm");
    await page.click("#confirm button");
    await expect(page.locator(".notice").textContent()).resolves.toContain("Replayed 1 delivery");
    const after = (await seeded.postel.outbound.messages.deliveries(seeded.ids[0]!)).find(
      (d) => d.endpointId === seeded.broken.id,
    )!;
    expect(after.status).toBe("pending");
    expect(after.webhookId).not.toBe(before.webhookId);
  });

  test("replays everything matching a filter", async () => {
    await page.goto(`${base()}/dead-letters?endpoint=${seeded.broken.id}`);
    await expect(page.locator("tbody tr").count()).resolves.toBe(1);
    await page.click("text=Replay everything matching this filter");
    await expect(page.locator("#confirm-count").getAttribute("data-count")).resolves.toBe("1");
    await page.click("#confirm button");
    await expect(page.locator(".notice").textContent()).resolves.toContain("Replayed 1 delivery");
    await deliverAll(seeded.postel, seeded.clock);
    await page.goto(`${base()}/dead-letters`);
    await expect(page.locator("tbody td").first().textContent()).resolves.toBe("No dead letters match.");
    expect(receiver.delivered.get("/broken")).toHaveLength(3);
  });

  test("disables and enables an endpoint", async () => {
    await page.goto(`${base()}/endpoints/${seeded.broken.id}`);
    await page.click("button:text-is('Disable')");
    await expect(page.locator(".card .badge").first().textContent()).resolves.toBe("disabled");
    expect((await seeded.postel.outbound.endpoints.get(seeded.broken.id))?.state).toBe("disabled");
    await shot("endpoint-disabled");
    await page.click("button:text-is('Enable')");
    await expect(page.locator(".card .badge").first().textContent()).resolves.toBe("active");
    expect((await seeded.postel.outbound.endpoints.get(seeded.broken.id))?.state).toBe("active");
  });

  test("rotates a secret, and reveals it only when asked", async () => {
    const before = await seeded.postel.outbound.endpoints.secret(seeded.good.id);
    await page.goto(`${base()}/endpoints/${seeded.good.id}`);
    await expect(page.content()).resolves.not.toContain(before);
    await page.selectOption("select[name=overlap]", "3600000");
    await page.click("button:text-is('Rotate secret')");
    await expect(page.locator(".notice").textContent()).resolves.toContain("New signing secret");
    const after = await seeded.postel.outbound.endpoints.secret(seeded.good.id);
    expect(after).not.toBe(before);
    await expect(page.content()).resolves.not.toContain(after);
    await page.click("button:text-is('Reveal secret')");
    await expect(page.locator("#secret").textContent()).resolves.toBe(after);
    await shot("secret");
  });

  test("refuses POSTs without a token, with a wrong one, and from another origin", async () => {
    const action = `${base()}/endpoints/${seeded.good.id}/disable`;
    const none = await page.request.post(action, { form: {} });
    expect(none.status()).toBe(403);
    const wrong = await page.request.post(action, { form: { _csrf: "A".repeat(43) } });
    expect(wrong.status()).toBe(403);
    // A token stolen from the page is still refused when the form comes from another site.
    await page.goto(`${base()}/endpoints/${seeded.good.id}`);
    const token = await page.locator("input[name=_csrf]").first().inputValue();
    const attacker = await serveAttacker(action, { _csrf: token });
    try {
      const response = page.waitForResponse(action);
      await page.goto(attacker.origin);
      expect((await response).status()).toBe(403);
      await expect(page.locator("main").textContent()).resolves.toContain("sent from another site");
    } finally {
      await attacker.close();
    }
    expect((await seeded.postel.outbound.endpoints.get(seeded.good.id))?.state).toBe("active");
  });

  test("refuses a visitor that authorize() turns away", async () => {
    const stranger = await browser.newContext();
    try {
      const visit = await stranger.newPage();
      const response = await visit.goto(`${base()}/messages`);
      expect(response?.status()).toBe(403);
      // A plain refusal: no page, no navigation, no cookie, nothing of the outbox.
      expect(response?.headers()["content-type"]).toContain("text/plain");
      await expect(visit.locator("body").textContent()).resolves.toContain("Forbidden");
      await expect(visit.content()).resolves.not.toContain(seeded.ids[0]!);
      expect(await stranger.cookies()).toEqual([]);
    } finally {
      await stranger.close();
    }
  });

  test("serves a strict CSP on every page, and the live view updates under it", async () => {
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const response = await page.goto(`${base()}/`);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.waitForSelector("#live[data-polls]");
    await expect(page.locator("#window-attempts").textContent()).resolves.toMatch(/^\d+$/);
    await shot("live");
    expect(violations).toEqual([]);
  });

  test("is readable at phone width", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    try {
      await phone.addCookies([{ name: "operator", value: "yes", url: server.origin }]);
      const small = await phone.newPage();
      await small.goto(`${base()}/messages/${seeded.ids[0]}`);
      const overflow = await small.evaluate("document.documentElement.scrollWidth - window.innerWidth");
      expect(overflow).toBeLessThanOrEqual(0);
      await small.screenshot({ path: `${ARTIFACTS}${storageName}-phone-message.png`, fullPage: true });
      await small.goto(`${base()}/endpoints`);
      await small.screenshot({ path: `${ARTIFACTS}${storageName}-phone-endpoints.png`, fullPage: true });
    } finally {
      await phone.close();
    }
    expect(dialogs).toEqual([]);
  });

  test("draws the last 15 minutes on load, ranks the failing endpoints, and redraws both from live.json", async () => {
    const noRetry = LinearBackoff({ maxAttempts: 0, step: "1s", jitter: 0 });
    const down = await seeded.postel.outbound.endpoints.create({
      url: "http://127.0.0.1:1/live-view",
      description: HOSTILE.description,
      types: ["live.*"],
      retryPolicy: noRetry,
      circuitBreaker: { minimumVolume: 1000 },
    });
    const fail = async (n: number) => {
      for (let i = 0; i < n; i++) await seeded.postel.outbound.send({ type: "live.check", data: { i } });
      await seeded.postel.drain();
      // The bucket under way is left out of the charts: move past it.
      await seeded.clock.advanceAsync("10s");
    };
    await fail(8);
    const firstRow = "#failing-rows tr:first-child";
    const points = (on: Page, id: string) => on.locator(`#${id} polyline`).getAttribute("points");
    const heights = (line: string | null) => (line ?? "").split(" ").map((xy) => Number(xy.split(",")[1]));

    // Without script, the server's drawing: 89 complete 10 s buckets, the attempts made among them.
    const still = await browser.newContext({ javaScriptEnabled: false });
    try {
      await still.addCookies([{ name: "operator", value: "yes", url: server.origin }]);
      const plain = await still.newPage();
      await plain.goto(`${base()}/`);
      for (const id of ["chart-throughput", "chart-failures"]) {
        const drawn = heights(await points(plain, id));
        expect(drawn, id).toHaveLength(89);
        expect(Math.min(...drawn), id).toBeLessThan(78);
      }
      await expect(plain.locator(`${firstRow} a`).textContent()).resolves.toBe(down.url);
      await expect(plain.locator(`${firstRow} td[data-label=Failures]`).textContent()).resolves.toBe("8");
    } finally {
      await still.close();
    }

    await page.goto(`${base()}/`);
    const onLoad = await points(page, "chart-throughput");
    await page.waitForSelector("#live[data-polls]");
    // Nothing happened since: live.js draws the very same line from live.json.
    await expect(points(page, "chart-throughput")).resolves.toBe(onLoad);
    await fail(4);
    await expect
      .poll(() => page.locator(`${firstRow} td[data-label=Failures]`).textContent(), { timeout: 10_000 })
      .toBe("12");
    await expect(points(page, "chart-throughput")).resolves.not.toBe(onLoad);
    expect(heights(await points(page, "chart-failures"))).toHaveLength(89);
    // The rows live.js built: the same cells, the link to the endpoint's page, the state's badge.
    await expect(page.locator(`${firstRow} td`).count()).resolves.toBe(7);
    await expect(page.locator(`${firstRow} a`).getAttribute("href")).resolves.toBe(
      `/postel/endpoints/${down.id}`,
    );
    await expect(page.locator(`${firstRow} .badge`).getAttribute("class")).resolves.toBe("badge ok");
    await expect(page.locator(`${firstRow} td[data-label=Failed]`).textContent()).resolves.toBe("100%");
    await expect(page.locator(`${firstRow} .muted`).textContent()).resolves.toBe(HOSTILE.description);
    await expect(page.locator("img").count()).resolves.toBe(0);
    await shot("live-ranked");
    expect(dialogs).toEqual([]);
  });

  test("shows an endpoint's activity card, a hostile answer as text, within 1280 px and 390 px", async () => {
    receiver.answer("/hostile", 410, HOSTILE.response);
    const hostile = await seeded.postel.outbound.endpoints.create({
      url: receiver.url("/hostile"),
      types: ["hostile.*"],
    });
    await seeded.postel.outbound.send({ type: "hostile.answer", data: {} });
    await seeded.postel.drain();
    extraPages.push(`/endpoints/${hostile.id}`);
    for (const { width, height } of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      const sized = await browser.newContext({ viewport: { width, height }, isMobile: width < 640 });
      try {
        await sized.addCookies([{ name: "operator", value: "yes", url: server.origin }]);
        const view = await sized.newPage();
        const seen: string[] = [];
        view.on("dialog", (dialog) => {
          seen.push(dialog.message());
          void dialog.dismiss();
        });
        await view.goto(`${base()}/endpoints/${hostile.id}`);
        const card = view.locator("#activity");
        await expect(card.locator("pre.snippet").textContent()).resolves.toBe(
          "<img src=x onerror=alert(1)>␛]0;title␇",
        );
        await expect(view.locator("#activity-last-status").textContent()).resolves.toContain("410");
        await expect(view.locator("#activity-last-error").textContent()).resolves.toContain("HTTP 410");
        await expect(view.locator("#activity-last-success").textContent()).resolves.toBe(
          "none in the last 24 h",
        );
        await expect(view.locator("#activity-recent tbody tr").count()).resolves.toBe(1);
        await expect(view.locator("img").count()).resolves.toBe(0);
        await expect(view.title()).resolves.toBe(`${hostile.id} · Postel`);
        const box = (await card.boundingBox())!;
        expect(box.width).toBeGreaterThan(0);
        expect(box.x + box.width, `${width} px`).toBeLessThanOrEqual(width);
        await expect(
          view.evaluate("document.documentElement.scrollWidth"),
          `${width} px`,
        ).resolves.toBeLessThanOrEqual(width);
        await card.screenshot({ path: `${ARTIFACTS}${storageName}-activity-${width}.png` });
        expect(seen).toEqual([]);
      } finally {
        await sized.close();
      }
    }
  });

  /**
   * For the layout tests (run last): a receiver whose URL is long, where one message dead-letters
   * (nothing listens on port 1), so tables hold long text beside the ids.
   */
  const extraPages: string[] = [];
  let layout: Promise<{ long: Endpoint; sent: string }> | undefined;
  const layoutData = () => {
    layout ??= (async () => {
      const long = await seeded.postel.outbound.endpoints.create({
        url: `http://127.0.0.1:1/hooks/${"billing-and-invoices-".repeat(6)}receiver`,
        types: ["layout.*"],
        retryPolicy: LinearBackoff({ maxAttempts: 1, step: "1s", jitter: 0 }),
      });
      const sent = (await seeded.postel.outbound.send({ type: "layout.check", data: { n: 1 } })).id;
      await deliverAll(seeded.postel, seeded.clock);
      extraPages.push(`/messages/${sent}`, `/endpoints/${long.id}`);
      return { long, sent };
    })();
    return layout;
  };

  /** Every page an operator can reach. */
  const pages = () => [
    "/",
    "/endpoints",
    `/endpoints/${seeded.good.id}`,
    `/endpoints/${seeded.broken.id}`,
    "/messages",
    `/messages/${seeded.ids[0]}`,
    `/messages/${seeded.hostileId}`,
    "/dead-letters",
    "/dead-letters?status=failed",
    "/audit",
    ...extraPages,
    "/nope",
  ];

  test("keeps every id on one line at 1280 px", async () => {
    await layoutData();
    const wide = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      await wide.addCookies([{ name: "operator", value: "yes", url: server.origin }]);
      const desk = await wide.newPage();
      let seen = 0;
      for (const path of pages()) {
        await desk.goto(`${base()}${path}`);
        // Each text that is an id (msg_, ep_, dlv_, aud_ and webhook-ids): how many lines it takes.
        const broken = await desk.evaluate(`(() => {
          const walker = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
          const found = [];
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const text = node.textContent.trim();
            if (!/^[a-z]{2,4}_[0-9a-z]{26}$/.test(text)) continue;
            const range = document.createRange();
            range.selectNodeContents(node);
            const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
            found.push({ text, lines: lines.size });
          }
          return found;
        })()`);
        const ids = broken as { text: string; lines: number }[];
        seen += ids.length;
        expect(
          ids.filter((id) => id.lines !== 1),
          path,
        ).toEqual([]);
      }
      expect(seen).toBeGreaterThan(20);
      await desk.goto(`${base()}/dead-letters`);
      await desk.screenshot({ path: `${ARTIFACTS}${storageName}-wide-dead-letters.png`, fullPage: true });
    } finally {
      await wide.close();
    }
  });

  test("fits every page in a 390 px phone", async () => {
    await layoutData();
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    try {
      await phone.addCookies([{ name: "operator", value: "yes", url: server.origin }]);
      const small = await phone.newPage();
      for (const path of pages()) {
        await small.goto(`${base()}${path}`);
        await expect(
          small.evaluate("document.documentElement.scrollWidth"),
          path,
        ).resolves.toBeLessThanOrEqual(390);
      }
      await small.goto(`${base()}/dead-letters`);
      await small.screenshot({ path: `${ARTIFACTS}${storageName}-phone-dead-letters.png`, fullPage: true });
    } finally {
      await phone.close();
    }
  });
});
