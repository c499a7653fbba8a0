import { ExponentialBackoff, ManualClock, Postel, type Storage } from "@postel/core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createPortal, PAGE_ROUTES, type Portal, type PortalOptions } from "../src/index.js";
import { ARTIFACTS, launchChromium } from "./support/browser/chromium.js";
import { HOSTILE } from "./support/browser/hostile.js";
import { startReceiver, type TestReceiver } from "./support/browser/receiver.js";
import {
  autoPostingPage,
  framingPage,
  serveOtherOrigin,
  servePortal,
  type TestServer,
} from "./support/browser/servers.js";
import { createStorage, type TestStorage } from "./support/browser/storages.js";
import { until } from "./support/browser/until.js";
import { catalog } from "./support/catalog.js";

const SECRET = "portal-browser-secret-0123456789abcdef";
const SESSION_COOKIE = "postel_portal_session";
const ID_IN_URL = /\/portal\/endpoints\/([^/?]+)\?done=created$/;

/** Postel on a real database and `clock`, sending over real HTTP to receivers on 127.0.0.1. */
function outbox(storage: Storage<unknown>, clock: ManualClock) {
  return Postel({
    clock,
    outbound: {
      storage,
      http: { allowPrivateNetworks: true },
      // Dead-lettered at the first failure, so replay and recover have something to send again.
      retryPolicy: ExponentialBackoff({ maxAttempts: 0 }),
      // Deliveries go out when a test drains the outbox, not on a worker's timer.
      workers: { pollInterval: "1h" },
      events: catalog,
    },
  });
}

/** Elements no portal page has, so one in the DOM was injected: script, image, SVG and frame elements. */
const FOREIGN_ELEMENTS =
  "['script', 'img', 'svg', 'iframe'].map((tag) => document.getElementsByTagName(tag).length)";
/** The focused element: whether it matches :focus-visible, and the outline that makes it visible. */
const FOCUS_RING = `(() => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  return { visible: el.matches(":focus-visible"), outline: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0 };
})()`;

describe.each(["postgres", "sqlite"] as const)(
  "the portal in Chromium on %s",
  { timeout: 90_000 },
  (storageName) => {
    let browser: Browser;
    let database: TestStorage;
    let receiver: TestReceiver;
    let clock: ManualClock;
    let postel: ReturnType<typeof outbox>;
    let portal: Portal;
    let server: TestServer;
    let other: Awaited<ReturnType<typeof serveOtherOrigin>>;
    const closing: TestServer[] = [];
    const base = () => `${server.origin}/portal`;
    /** What test 1 leaves for the layout test: the failing endpoint and its failed message. */
    const made = { failing: "", failedMessage: "" };

    const portalWith = (options: Partial<PortalOptions> = {}) =>
      createPortal({ postel, basePath: "/portal", secret: SECRET, clock, ...options });

    beforeAll(async () => {
      browser = await launchChromium();
      database = await createStorage(storageName);
      receiver = await startReceiver();
      clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
      postel = outbox(database.storage, clock);
      portal = portalWith();
      server = await servePortal(portal);
      other = await serveOtherOrigin();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      for (const s of [server, other, ...closing]) await s?.close();
      await postel?.close();
      await receiver?.close();
      await database?.drop();
    });

    /** A fresh browser context (its own cookies) whose page records the dialogs and CSP violations it sees. */
    async function visitor(options: Parameters<Browser["newContext"]>[0] = {}) {
      const context: BrowserContext = await browser.newContext(options);
      const page = await context.newPage();
      const dialogs: string[] = [];
      const violations: string[] = [];
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      return { context, page, dialogs, violations };
    }

    /** Opens a portal link the way a tenant does: the whole URL, fragment and all, in the address bar. */
    async function openLink(page: Page, link: string, origin = server.origin) {
      await page.goto(`${origin}${link}`, { waitUntil: "commit" });
    }

    async function signIn(page: Page, tenantId: string, actor: string) {
      await openLink(page, await portal.link({ tenantId, actor }));
      await page.waitForURL(`${base()}/`);
    }

    /** Drains the outbox until `probe` holds: deliveries go out over real HTTP, not on a timer. */
    const deliveredUntil = <T>(what: string, probe: () => Promise<T | undefined | null | false>) =>
      until(what, async () => {
        await postel.drain();
        return probe();
      });

    const attemptsOf = async (messageId: string) =>
      (await postel.outbound.messages.attempts(messageId)).length;

    test("a tenant signs in by link, adds an endpoint from the catalog, manages its secret, tests, replays and recovers", async () => {
      const { context, page, dialogs } = await visitor();
      // Where the address bar stood when the token went out: the sign-in script must have cleared it.
      let addressAtExchange = "";
      page.on("request", (request) => {
        if (request.method() === "POST" && request.url() === `${base()}/sign-in`)
          addressAtExchange = request.frame().url();
      });
      await openLink(page, await portal.link({ tenantId: "acme", actor: "ada@acme.test" }));
      await page.waitForURL(`${base()}/`);
      expect(addressAtExchange).toBe(`${base()}/sign-in`);
      expect(page.url()).toBe(`${base()}/`);
      expect(await page.locator("header .who").textContent()).toContain("ada@acme.test");
      const session = (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
      expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/portal" });
      expect(await page.evaluate<string>("document.cookie")).not.toContain(SESSION_COOKIE);

      // An endpoint from the catalog's picker.
      await page.click("text=Add an endpoint");
      await page.waitForURL(`${base()}/endpoints/new`);
      expect(await page.locator(".picker h3").allTextContents()).toContain("orders");
      expect(await page.locator(".picker .desc", { hasText: "paid" }).textContent()).toBe(
        "An order was paid <b>in full</b>.",
      );
      await page.fill("#url", receiver.url("/ok"));
      await page.fill("#description", "Billing server");
      await page.check('input[name=types][value="order.created"]');
      await page.check('input[name=types][value="order.paid"]');
      await page.click("button:text-is('Add endpoint')");
      await page.waitForURL(ID_IN_URL);
      const id = ID_IN_URL.exec(page.url())![1]!;
      expect(await page.locator(".notice").textContent()).toContain("Endpoint added.");
      const endpoint = await postel.outbound.endpoints.get(id);
      expect([endpoint?.tenantId, endpoint?.types, endpoint?.description]).toEqual([
        "acme",
        ["order.created", "order.paid"],
        "Billing server",
      ]);

      // The secret: shown only when asked, and a rotated one replaces it.
      const secret = await postel.outbound.endpoints.secret(id);
      expect(await page.content()).not.toContain(secret);
      await page.click("button:text-is('Reveal secret')");
      await page.waitForURL(`${base()}/endpoints/${id}/reveal-secret`);
      expect(await page.locator("code.secret").textContent()).toBe(secret);
      await page.selectOption("#overlap", "1h");
      await page.click("button:text-is('Rotate secret')");
      await page.waitForURL(`${base()}/endpoints/${id}/rotate-secret`);
      const rotated = await page.locator("code.secret").textContent();
      expect(rotated).not.toBe(secret);
      expect(rotated).toBe(await postel.outbound.endpoints.secret(id));

      // A test event reaches the real receiver, and shows under Messages.
      await page.goto(`${base()}/endpoints/${id}`);
      await page.selectOption("#test-type", "order.created");
      await page.click("button:text-is('Send test event')");
      await page.waitForURL(`${base()}/endpoints/${id}?done=tested`);
      const arrived = await deliveredUntil("the receiver got the test event", async () =>
        receiver.received.find((r) => r.path === "/ok"),
      );
      expect(JSON.parse(arrived.body)).toMatchObject({ type: "order.created" });
      await page.click("nav >> text=Messages");
      await page.waitForURL(`${base()}/messages`);
      await page.click("tbody tr:first-child a");
      await page.waitForURL(/\/portal\/messages\/msg_/);
      expect(await page.locator("h1").textContent()).toBe("order.created");
      expect(await page.locator("section h2 a").textContent()).toBe(receiver.url("/ok"));
      expect(await page.locator("section dd .badge").first().textContent()).toBe("succeeded");
      const webhookId = String(arrived.headers["webhook-id"]);
      expect(await page.locator("section dd.mono").textContent()).toBe(webhookId);

      // A receiver that fails: its trail shows the 500 and the HTML it answered, as text.
      await page.goto(`${base()}/endpoints/new`);
      await page.fill("#url", receiver.url("/fail"));
      await page.check('input[name=types][value="*"]');
      await page.click("button:text-is('Add endpoint')");
      await page.waitForURL(ID_IN_URL);
      const failing = ID_IN_URL.exec(page.url())![1]!;
      await page.selectOption("#test-type", "order.paid");
      await page.click("button:text-is('Send test event')");
      await page.waitForURL(`${base()}/endpoints/${failing}?done=tested`);
      const failed = (await postel.outbound.messages.list({ tenantId: "acme", type: "order.paid" })).items[0]!
        .id;
      await deliveredUntil("the test event was dead-lettered", async () => {
        const [delivery] = await postel.outbound.messages.deliveries(failed);
        return delivery?.status === "dead-lettered";
      });
      await page.click("nav >> text=Messages");
      await page.click(`a[href="/portal/messages/${failed}"]`);
      await page.waitForURL(`${base()}/messages/${failed}`);
      const trail = page.locator("table.trail tbody tr");
      expect(await trail.count()).toBe(1);
      expect(await trail.locator("td[data-label=Status]").textContent()).toBe("500");
      expect(await trail.locator("td[data-label=Response] pre").textContent()).toBe(HOSTILE.response);
      expect(await page.evaluate<number[]>(FOREIGN_ELEMENTS)).toEqual([0, 0, 0, 0]);

      // Replayed from the trail: a second attempt.
      await page.click("button:text-is('Send again')");
      await page.waitForURL(`${base()}/messages/${failed}?done=replayed&n=1`);
      expect(await page.locator(".notice").textContent()).toBe("Delivery sent again.");
      await deliveredUntil("the replay was attempted", async () => (await attemptsOf(failed)) === 2);
      await page.reload();
      expect(await trail.count()).toBe(2);

      // Recovered since a time: counted first, then sent.
      await page.goto(`${base()}/endpoints/${failing}`);
      await page.fill("#since", new Date(clock.now() - 3_600_000).toISOString().slice(0, 16));
      await page.click("button:text-is('Count deliveries to recover')");
      await page.waitForURL(`${base()}/endpoints/${failing}/recover`);
      expect(await page.locator("h1").textContent()).toBe("Recover deliveries");
      expect(await page.locator("main p").first().textContent()).toMatch(
        /^1 delivery to .+\/fail failed or gave up/,
      );
      await page.click("button:text-is('Send it again')");
      await page.waitForURL(`${base()}/endpoints/${failing}?done=recovered&n=1`);
      expect(await page.locator(".notice").textContent()).toBe("Sending 1 delivery again.");
      await deliveredUntil(
        "the recovered delivery was attempted",
        async () => (await attemptsOf(failed)) === 3,
      );
      expect(receiver.received.filter((r) => r.path === "/fail")).toHaveLength(3);

      await page.click("nav >> text=Activity");
      await page.waitForURL(`${base()}/activity`);
      const did = await page.locator("td[data-label=What]").allTextContents();
      for (const what of [
        "signed in by link",
        "added an endpoint",
        "revealed a signing secret",
        "rotated a signing secret",
        "sent a test event",
        "sent a delivery again",
        "recovered failed deliveries",
      ])
        expect(did).toContain(what);
      expect(dialogs).toEqual([]);
      Object.assign(made, { failing, failedMessage: failed });
      await context.close();
    });

    test("an expired link and a link used a second time are refused, and open no session", async () => {
      const expiring = await portal.link({ tenantId: "acme", actor: "late", ttl: "5m" });
      await clock.advanceAsync("6m");
      const late = await visitor();
      await expectRefused(late, expiring, "This link has expired. Ask for a new one.");

      const link = await portal.link({ tenantId: "acme", actor: "once" });
      const first = await visitor();
      await openLink(first.page, link);
      await first.page.waitForURL(`${base()}/`);
      expect((await first.context.cookies()).map((c) => c.name)).toContain(SESSION_COOKIE);
      const second = await visitor();
      await expectRefused(second, link, "This link was already used. Ask for a new one.");
      for (const { context } of [late, first, second]) await context.close();
    });

    async function expectRefused(
      { context, page }: Awaited<ReturnType<typeof visitor>>,
      link: string,
      text: string,
    ) {
      const exchange = page.waitForResponse(
        (r) => r.url() === `${base()}/sign-in` && r.request().method() === "POST",
      );
      await openLink(page, link);
      expect((await exchange).status()).toBe(403);
      expect(await page.locator("main p").textContent()).toBe(text);
      expect(page.url()).toBe(`${base()}/sign-in`);
      expect((await context.cookies()).map((c) => c.name)).not.toContain(SESSION_COOKIE);
      expect((await page.goto(`${base()}/`))?.status()).toBe(403);
    }

    test("what a tenant or a receiver controls renders as text on every page", async () => {
      const { context, page, dialogs, violations } = await visitor();
      await signIn(page, "initech", HOSTILE.text);
      const filter = { "data.note": { $eq: HOSTILE.text } };
      await page.goto(`${base()}/endpoints/new`);
      await page.fill("#url", receiver.url(`/fail${HOSTILE.query}`));
      await page.fill("#description", HOSTILE.text);
      await page.check('input[name=types][value="*"]');
      await page.click("summary");
      await page.fill("#filter", JSON.stringify(filter));
      await page.click("button:text-is('Add endpoint')");
      await page.waitForURL(ID_IN_URL);
      const id = ID_IN_URL.exec(page.url())![1]!;
      const { id: messageId } = await postel.outbound.send({
        type: "order.created",
        data: { note: HOSTILE.text },
        tenantId: "initech",
      });
      await deliveredUntil("the hostile receiver answered", async () => (await attemptsOf(messageId)) === 1);

      const pages = [
        "/",
        `/endpoints/${id}`,
        `/endpoints/${id}/edit`,
        "/messages",
        `/messages/${messageId}`,
        "/activity",
      ];
      for (const path of pages) {
        await page.goto(`${base()}${path}`);
        expect([path, await page.evaluate<number[]>(FOREIGN_ELEMENTS)]).toEqual([path, [0, 0, 0, 0]]);
        expect(await page.locator("header .who").textContent()).toBe(`${HOSTILE.text}Sign out`);
      }
      await page.goto(`${base()}/`);
      expect(await page.locator("td[data-label=URL] .muted").textContent()).toBe(HOSTILE.text);
      await page.goto(`${base()}/endpoints/${id}`);
      expect(await page.locator("h1").textContent()).toBe(HOSTILE.text);
      const { url } = (await postel.outbound.endpoints.get(id))!;
      expect(url).toContain("/fail?q=");
      expect(await page.locator("dl.fields dd").first().textContent()).toBe(url);
      expect(JSON.parse((await page.locator("pre.json").textContent()) ?? "")).toEqual(filter);
      await page.goto(`${base()}/endpoints/${id}/edit`);
      expect(await page.inputValue("#description")).toBe(HOSTILE.text);
      expect(JSON.parse(await page.inputValue("#filter"))).toEqual(filter);
      await page.goto(`${base()}/messages/${messageId}`);
      expect(await page.locator("td[data-label=Response] pre").textContent()).toBe(HOSTILE.response);
      expect(await page.locator("pre.json").first().textContent()).toContain("<script>alert(");
      await page.goto(`${base()}/activity`);
      expect(await page.locator("td[data-label=Who]").allTextContents()).toContain(HOSTILE.text);
      expect(dialogs).toEqual([]);
      expect(violations).toEqual([]);
      await context.close();
    });

    test("a form another origin posts is refused, even with the page's own token, and deletes nothing", async () => {
      const { context, page } = await visitor();
      await signIn(page, "hooli", "gavin");
      const endpoint = await postel.outbound.endpoints.create({
        url: receiver.url("/ok"),
        tenantId: "hooli",
      });
      const action = `${base()}/endpoints/${endpoint.id}/delete`;
      await page.goto(`${base()}/endpoints/${endpoint.id}`);
      const token = await page.locator("input[name=_csrf]").first().inputValue();
      for (const fields of [{ confirm: "1" }, { confirm: "1", _csrf: token }]) {
        other.show(autoPostingPage(action, fields));
        const answer = page.waitForResponse(action);
        await page.goto(other.origin);
        expect((await answer).status()).toBe(403);
        expect(await page.locator("main .error").textContent()).toContain("sent from another site");
        expect(await postel.outbound.endpoints.get(endpoint.id)).not.toBeNull();
      }
      // The same form from the portal's own page does delete: the refusal was the other origin's.
      await page.goto(`${base()}/endpoints/${endpoint.id}`);
      await page.check("input[name=confirm]");
      await page.click("button:text-is('Delete endpoint')");
      await page.waitForURL(`${base()}/?done=deleted`);
      expect(await postel.outbound.endpoints.get(endpoint.id)).toBeNull();
      await context.close();
    });

    test("another origin cannot frame the portal, unless frameAncestors names it", async () => {
      const { context, page, violations } = await visitor();
      await signIn(page, "acme", "framed");
      other.show(framingPage(`${base()}/`));
      const refused = page.waitForResponse(`${base()}/`);
      await page.goto(other.origin);
      expect((await refused).headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
      // The portal answered, and Chromium put its own error page in the frame instead.
      const blocked = page.frames().find((frame) => frame !== page.mainFrame());
      expect(blocked?.url()).toBe("chrome-error://chromewebdata/");
      expect(await page.frameLocator("#embedded").locator("main#main").count()).toBe(0);
      await until("Chromium reported the refused framing", () =>
        violations.some((text) => text.includes("frame-ancestors 'none'")),
      );
      violations.length = 0;

      const framing = portalWith({ frameAncestors: [other.origin] });
      const embedded = await servePortal(framing);
      closing.push(embedded);
      await openLink(page, await framing.link({ tenantId: "acme", actor: "framed" }), embedded.origin);
      await page.waitForURL(`${embedded.origin}/portal/`);
      other.show(framingPage(`${embedded.origin}/portal/`));
      await page.goto(other.origin);
      const frame = page.frameLocator("#embedded");
      expect(await frame.locator("main#main h1").textContent()).toBe("Endpoints");
      expect(await frame.locator("header .who").textContent()).toContain("framed");
      expect(page.frames().map((f) => f.url())).toEqual([`${other.origin}/`, `${embedded.origin}/portal/`]);
      expect(violations).toEqual([]);
      await context.close();
    });

    test("a keyboard alone reaches Add an endpoint and submits the form, focus visible on the way", async () => {
      const { context, page } = await visitor();
      await signIn(page, "stark", "pepper");
      const tabTo = async (selector: string) => {
        for (let presses = 0; presses < 40; presses++) {
          await page.keyboard.press("Tab");
          if (await page.evaluate<boolean>(`document.activeElement.matches(${JSON.stringify(selector)})`)) {
            expect([selector, await page.evaluate(FOCUS_RING)]).toEqual([
              selector,
              { visible: true, outline: true },
            ]);
            return;
          }
        }
        throw new Error(`Tab never reached ${selector}`);
      };
      await tabTo("a.button");
      expect(await page.evaluate<string>("document.activeElement.textContent")).toBe("Add an endpoint");
      await page.keyboard.press("Enter");
      await page.waitForURL(`${base()}/endpoints/new`);
      await tabTo("#url");
      await page.keyboard.type(receiver.url("/ok"));
      await tabTo("#description");
      await page.keyboard.type("Typed, not clicked");
      await tabTo('input[value="order.paid"]');
      await page.keyboard.press("Space");
      await tabTo("button.primary");
      await page.keyboard.press("Enter");
      await page.waitForURL(ID_IN_URL);
      const endpoint = await postel.outbound.endpoints.get(ID_IN_URL.exec(page.url())![1]!);
      expect([endpoint?.tenantId, endpoint?.types, endpoint?.description]).toEqual([
        "stark",
        ["order.paid"],
        "Typed, not clicked",
      ]);
      await context.close();
    });

    test.each([1280, 390])(
      "every page fits %d px without scrolling sideways (screenshots)",
      async (width) => {
        const { context, page, violations } = await visitor({
          viewport: { width, height: 844 },
          isMobile: width < 600,
        });
        const fits = async (name: string) => {
          const scrollWidth = await page.evaluate<number>("document.documentElement.scrollWidth");
          expect([name, scrollWidth <= width ? "fits" : `${scrollWidth} px wide`]).toEqual([name, "fits"]);
          await page.screenshot({ path: `${ARTIFACTS}${storageName}-${width}-${name}.png`, fullPage: true });
        };
        await signIn(page, "acme", "ada@acme.test");
        const gets = PAGE_ROUTES.filter((route) => route.startsWith("GET "));
        for (const route of gets) {
          const path = route
            .slice(4)
            .replace(/^\/endpoints\/:id/, `/endpoints/${made.failing}`)
            .replace(/^\/messages\/:id/, `/messages/${made.failedMessage}`);
          const response = await page.goto(`${base()}${path}`);
          expect([route, response?.status()]).toEqual([route, 200]);
          await fits(path === "/" ? "endpoints" : route.slice(5).replaceAll("/", "-").replaceAll(":", ""));
        }
        await page.goto(`${base()}/endpoints/${made.failing}`);
        await page.click("button:text-is('Reveal secret')");
        await page.waitForURL(`${base()}/endpoints/${made.failing}/reveal-secret`);
        await fits("secret-revealed");
        await page.goto(`${base()}/endpoints/${made.failing}`);
        await page.click("button:text-is('Count deliveries to recover')");
        await page.waitForURL(`${base()}/endpoints/${made.failing}/recover`);
        await fits("recover-count");
        await page.click("button:text-is('Sign out')");
        await page.waitForURL(`${base()}/signed-out`);
        await fits("signed-out");
        const expired = await portal.link({ tenantId: "acme", ttl: "1s" });
        await clock.advanceAsync("2s");
        await openLink(page, expired);
        await page.locator("main p", { hasText: "has expired" }).waitFor();
        await fits("sign-in-refused");
        expect(gets.length).toBeGreaterThanOrEqual(7);
        expect(violations).toEqual([]);
        await context.close();
      },
    );
  },
);
