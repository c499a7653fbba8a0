import type { Endpoint, HeldKey } from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { element, formFields, type Harness, startHarness } from "./support/harness.js";

// A key an attacker could pick (ordering keys are the app's data, often a customer's id or name).
const KEY = "<script>alert(1)</script>";
const ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;";

// Ordered delivery is in InMemoryStorage only so far.
describe("held ordering keys", () => {
  let h: Harness;
  /** Holds a key whose head fails for good; `/orders` refuses with 400 until told otherwise. */
  let orders: Endpoint;
  let messageIds: string[];
  let held: HeldKey;

  const heldKeys = async () => (await h.postel.outbound.orderingKeys.held()).items;
  const statusOf = async (messageId: string) =>
    (await h.postel.outbound.messages.deliveries(messageId))[0]!.status;

  beforeAll(async () => {
    h = await startHarness("memory");
    h.receiver.answer("/orders", 400, "unknown order <b>42</b>");
    orders = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/orders"),
      types: ["order.*"],
      onKeyFailure: "hold",
    });
    messageIds = [];
    for (let i = 0; i < 3; i++) {
      messageIds.push(
        (await h.postel.outbound.send({ type: "order.updated", data: { i }, orderingKey: KEY })).id,
      );
    }
    await h.postel.drain();
    [held] = (await heldKeys()) as [HeldKey];
    expect(held).toMatchObject({ orderingKey: KEY, messageId: messageIds[0], status: "failed", waiting: 2 });
  });

  afterAll(() => h?.close());

  test("the Held keys page lists the key, escaped, with its head, why it failed, and how many wait", async () => {
    const page = await h.text("/held-keys");
    expect(page).toContain("<h1>Held keys</h1>");
    expect(page).toMatch(/<a href="\/postel\/held-keys" aria-current="page">Held keys<\/a>/);
    expect(page).not.toContain(KEY);
    const row = element(page, "held-keys", "table").split("<tbody>")[1]!;
    expect(row).toContain(`<td data-label="Key" class="mono">${ESCAPED}</td>`);
    expect(row).toContain(held.deliveryId);
    expect(row).toContain(`href="/postel/messages/${messageIds[0]}"`);
    expect(row).toContain('<span class="badge bad">failed</span>');
    expect(row).toContain(`<td data-label="Last error">${held.lastError}</td>`);
    expect(row).toContain('<td data-label="Waiting">2</td>');
    // Replay the head: the message page's replay of that one delivery.
    expect(row).toContain(`action="/postel/messages/${messageIds[0]}/replay"`);
    expect(row).toContain(`<input type="hidden" name="key" value="${ESCAPED}">`);
    const readOnly = await h.text("/held-keys", "read-only");
    expect(readOnly).toContain(ESCAPED);
    expect(readOnly).not.toContain('<form method="post"');
    const filtered = await h.text(`/held-keys?endpoint=ep_none`);
    expect(filtered).toContain("No held keys on this endpoint.");
  });

  test("the live view counts the deliveries waiting behind their key and the held keys; the endpoint shows its policy", async () => {
    const live = await h.text("/");
    expect(element(live, "ordering-waiting", "span")).toContain(">2</span>");
    expect(element(live, "held-keys", "span")).toContain(">1</span>");
    expect(live).toContain('<a href="/postel/held-keys">Held keys</a>');
    const json = (await (await h.get("/live.json")).json()) as { ordering: unknown };
    expect(json.ordering).toEqual({ waiting: 2, heldKeys: 1, heldKeysCap: 20 });
    const endpoint = await h.text(`/endpoints/${orders.id}`);
    expect(element(endpoint, "on-key-failure", "dd")).toContain("hold");
    expect(element(endpoint, "on-key-failure", "dd")).toContain(`/postel/held-keys?endpoint=${orders.id}`);
  });

  test("skipping needs a valid CSRF token: without one, or with a forged one, nothing changes", async () => {
    const forged = (fields: [string, string][]) =>
      h.dashboard(
        new Request("http://127.0.0.1/postel/held-keys/skip", {
          method: "POST",
          headers: {
            "x-role": "admin",
            "content-type": "application/x-www-form-urlencoded",
            "sec-fetch-site": "same-origin",
            origin: "http://127.0.0.1",
          },
          body: new URLSearchParams(fields),
        }),
      );
    for (const fields of [
      [
        ["endpoint", orders.id],
        ["key", KEY],
      ],
      [
        ["endpoint", orders.id],
        ["key", KEY],
        ["_csrf", "forged"],
      ],
    ] as [string, string][][]) {
      const refused = await forged(fields);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toMatch(/nothing was changed\./i);
    }
    expect(await heldKeys()).toHaveLength(1);
  });

  test("skip asks first, then skips once: the key is gone, its waiting messages are delivered, the audit log says who", async () => {
    const confirm = await h.post("/held-keys/skip", { endpoint: orders.id, key: KEY });
    expect(confirm.status).toBe(200);
    const page = await confirm.text();
    expect(page).toContain("<h1>Skip this key?</h1>");
    expect(page).toContain(`<strong class="mono">${ESCAPED}</strong>`);
    expect(page).not.toContain(KEY);
    expect(page).toContain(held.deliveryId);
    expect(await heldKeys()).toHaveLength(1);

    h.receiver.answer("/orders", 200, "ok");
    const fields = formFields(page).filter(([name]) => name !== "_csrf");
    expect(fields.map(([name]) => name)).toEqual(["endpoint", "key", "head", "nonce"]);
    const skipped = await h.post("/held-keys/skip", fields);
    expect(skipped.status).toBe(303);
    expect(skipped.headers.get("location")).toBe("/postel/held-keys?done=skipped");
    expect(await heldKeys()).toEqual([]);
    expect(await h.text("/held-keys?done=skipped")).toContain("Key skipped: its waiting messages go now");

    await h.postel.drain();
    expect(h.receiver.delivered.get("/orders")).toHaveLength(2);
    expect(await Promise.all(messageIds.map(statusOf))).toEqual(["failed", "succeeded", "succeeded"]);
    const entries = (await h.postel.outbound.auditLog.list({ action: "ordering-key.skip" })).items;
    expect(entries).toEqual([
      expect.objectContaining({
        actor: "ada@example.test",
        source: "dashboard",
        target: orders.id,
        detail: { orderingKey: KEY, skippedDeliveryId: held.deliveryId, waiting: 2 },
      }),
    ]);

    // The same confirmation again: the key is no longer held, and nothing more is skipped or recorded.
    const again = await h.post("/held-keys/skip", fields);
    expect(again.status).toBe(404);
    expect(await again.text()).toContain("KEY_NOT_HELD");
    expect((await h.postel.outbound.auditLog.list({ action: "ordering-key.skip" })).items).toHaveLength(1);
  });

  test("Replay head re-sends the head through the message page's replay: it goes first, then the key's waiting message", async () => {
    h.receiver.answer("/orders", 400, "unknown order");
    const ids: string[] = [];
    for (const i of [0, 1])
      ids.push((await h.postel.outbound.send({ type: "order.updated", data: { i }, orderingKey: "k2" })).id);
    await h.postel.drain();
    const [head] = await heldKeys();
    expect(head).toMatchObject({ orderingKey: "k2", messageId: ids[0], waiting: 1 });
    h.receiver.answer("/orders", 200, "ok");
    const replayed = await h.post(`/messages/${ids[0]}/replay`, { endpoint: orders.id });
    expect(replayed.status).toBe(303);
    expect(await heldKeys()).toEqual([]);
    await h.postel.drain();
    await h.postel.drain();
    expect(await Promise.all(ids.map(statusOf))).toEqual(["succeeded", "succeeded"]);
  });
});
