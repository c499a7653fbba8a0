import { type AuditEntry, type DeliveryStatus, type Endpoint, LinearBackoff } from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { element, formFields, type Harness, startHarness } from "./support/harness.js";

describe.each(["postgres", "sqlite"] as const)("permanently failed deliveries on %s", (storageName) => {
  let h: Harness;
  /** Answers 410: each message's delivery here fails permanently. */
  let gone: Endpoint;
  /** Answers 500 with no retry: each message's delivery here is a dead letter. */
  let down: Endpoint;
  const ids: string[] = [];

  const statusAt = async (messageId: string, endpoint: Endpoint): Promise<DeliveryStatus> =>
    (await h.postel.outbound.messages.deliveries(messageId)).find((d) => d.endpointId === endpoint.id)!
      .status;
  const statuses = async (endpoint: Endpoint) => Promise.all(ids.map((id) => statusAt(id, endpoint)));
  const audit = async (action: string): Promise<AuditEntry[]> =>
    (await h.postel.outbound.auditLog.list({ action, limit: 100 })).items;
  /** Delivers what the replays re-enqueued: the receiver still answers 410, so they fail again. */
  const redeliver = async () => {
    await h.clock.advanceAsync("1s");
    await h.postel.drain();
  };

  beforeAll(async () => {
    h = await startHarness(storageName);
    h.receiver.answer("/gone", 410, "gone");
    h.receiver.answer("/down", 500, "down");
    gone = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/gone"), types: ["order.*"] });
    down = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/down"),
      types: ["order.*"],
      retryPolicy: LinearBackoff({ maxAttempts: 0, step: "1s", jitter: 0 }),
    });
    for (let i = 0; i < 3; i++) {
      ids.push((await h.postel.outbound.send({ type: "order.created", data: { i } })).id);
      await h.clock.advanceAsync("1s");
    }
    await h.postel.drain();
    expect(await statuses(gone)).toEqual(["failed", "failed", "failed"]);
    expect(await statuses(down)).toEqual(["dead-lettered", "dead-lettered", "dead-lettered"]);
  });

  afterAll(() => h?.close());

  test("lists the failed deliveries apart from the dead letters, each list with its count and empty text", async () => {
    const failed = await h.text("/dead-letters?status=failed");
    expect(failed).toContain("<h1>Failed permanently</h1>");
    const rows = element(failed, "selection", "form").split("<tbody>")[1]!;
    expect(rows.split(h.receiver.url("/gone"))).toHaveLength(4);
    expect(rows).not.toContain(h.receiver.url("/down"));
    for (const id of ids) expect(rows).toContain(`value="${id} ${gone.id}"`);
    expect(element(failed, "tab-failed", "a")).toContain('aria-current="page"');
    expect(element(failed, "tab-failed", "a")).toContain('<span class="count">3</span>');
    expect(element(failed, "tab-dead-letters", "a")).toContain('<span class="count">3</span>');
    expect(element(failed, "tab-dead-letters", "a")).not.toContain("aria-current");
    // Its forms stay on its list.
    expect(element(failed, "selection", "form")).toContain(
      '<input type="hidden" name="status" value="failed">',
    );

    const dead = await h.text("/dead-letters");
    expect(dead).toContain("<h1>Dead letters</h1>");
    const deadRows = element(dead, "selection", "form").split("<tbody>")[1]!;
    expect(deadRows.split(h.receiver.url("/down"))).toHaveLength(4);
    expect(deadRows).not.toContain(h.receiver.url("/gone"));
    expect(element(dead, "tab-dead-letters", "a")).toContain('aria-current="page"');

    const none = await h.text(`/dead-letters?status=failed&endpoint=${down.id}`);
    expect(none).toContain("No permanently failed deliveries match.");
    expect(element(none, "tab-failed", "a")).toContain('<span class="count">0</span>');
    expect(element(none, "tab-dead-letters", "a")).toContain('<span class="count">3</span>');

    expect((await h.get("/dead-letters?status=succeeded")).status).toBe(400);
  });

  test("replays one failed delivery, and nothing when the row named is a dead letter", async () => {
    const one = await h.post("/dead-letters/replay", { status: "failed", only: `${ids[0]} ${gone.id}` });
    expect(one.status).toBe(303);
    expect(one.headers.get("location")).toBe("/postel/dead-letters?status=failed&done=replayed&n=1");
    expect(await statuses(gone)).toEqual(["pending", "failed", "failed"]);
    const notFailed = await h.post("/dead-letters/replay", {
      status: "failed",
      only: `${ids[1]} ${down.id}`,
    });
    expect(notFailed.headers.get("location")).toBe("/postel/dead-letters?status=failed&done=replayed&n=0");
    expect(await statuses(down)).toEqual(["dead-lettered", "dead-lettered", "dead-lettered"]);
    await redeliver();
    expect(await statuses(gone)).toEqual(["failed", "failed", "failed"]);
  });

  test("replays the checked failed deliveries after a confirmation that runs once", async () => {
    const checked: [string, string][] = [
      ["status", "failed"],
      ["delivery", `${ids[0]} ${gone.id}`],
      ["delivery", `${ids[1]} ${gone.id}`],
      ["delivery", `${ids[2]} ${down.id}`],
      ["selected", "1"],
    ];
    const confirm = await (await h.post("/dead-letters/replay", checked)).text();
    expect(confirm).toContain("<h1>Replay 2 failed deliveries?</h1>");
    expect(confirm).toContain('data-count="2"');
    expect(await statuses(gone)).toEqual(["failed", "failed", "failed"]);
    const fields = formFields(confirm);
    expect(fields).toContainEqual(["status", "failed"]);
    const answers = await Promise.all([
      h.post("/dead-letters/replay", fields),
      h.post("/dead-letters/replay", fields),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 303]);
    expect(answers.find((a) => a.status === 303)!.headers.get("location")).toBe(
      "/postel/dead-letters?status=failed&done=replayed&n=2",
    );
    const again = await answers.find((a) => a.status === 200)!.text();
    expect(again).toContain("<h1>Already done</h1>");
    expect(again).toContain('href="/postel/audit?action=failed.replay"');
    expect(again).toContain('href="/postel/dead-letters?status=failed"');
    expect(await statuses(gone)).toEqual(["pending", "pending", "failed"]);
    expect(await statuses(down)).toEqual(["dead-lettered", "dead-lettered", "dead-lettered"]);
    expect(await audit("failed.replay")).toMatchObject([
      { actor: "ada@example.test", target: null, detail: { confirmed: 2, fresh: false } },
    ]);
    await redeliver();
  });

  test("replays everything matching the filter in the failed list, never the dead letters", async () => {
    const confirm = await (await h.post("/dead-letters/replay-all", { status: "failed" })).text();
    expect(confirm).toContain("<h1>Replay 3 failed deliveries?</h1>");
    const fields = formFields(confirm);
    const response = await h.post("/dead-letters/replay-all", fields);
    expect(response.headers.get("location")).toBe("/postel/dead-letters?status=failed&done=replayed&n=3");
    expect(await statuses(gone)).toEqual(["pending", "pending", "pending"]);
    expect(await statuses(down)).toEqual(["dead-lettered", "dead-lettered", "dead-lettered"]);
    expect(await audit("failed.replay-all")).toMatchObject([{ detail: { confirmed: 3 } }]);
    expect((await h.post("/dead-letters/replay-all", fields)).status).toBe(200);
    await redeliver();
    // The dead letters' own confirmation still counts only them.
    const dead = await (await h.post("/dead-letters/replay-all", { endpoint: "" })).text();
    expect(dead).toContain("<h1>Replay 3 dead letters?</h1>");
    expect(formFields(dead).map(([name]) => name)).not.toContain("status");
  });

  test("shows a read-only operator both lists without a form", async () => {
    for (const path of ["/dead-letters?status=failed", "/dead-letters"]) {
      const page = await h.text(path, "read-only");
      expect(page, path).not.toContain('method="post"');
      expect(page, path).toContain('<span class="count">3</span>');
    }
    expect((await h.post("/dead-letters/replay-all", { status: "failed" }, "read-only")).status).toBe(403);
  });
});
