import { type Endpoint, HEALTH_BUCKET_MS, LinearBackoff } from "@postel/core";
import { formatTime } from "@postel/web-kit";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { element, type Harness, startHarness } from "./support/harness.js";
import { HOSTILE, HOSTILE_RESPONSE_SHOWN } from "./support/hostile.js";

/** The text of `<dd id="activity-<name>">` on an endpoint's page. */
const field = (page: string, name: string) => element(page, `activity-${name}`, "dd");

describe.each(["postgres", "sqlite"] as const)("an endpoint's page says why on %s", (storageName) => {
  let h: Harness;
  let flaky: Endpoint;
  const sent: string[] = [];
  /** When the receiver answered 200, and when it first answered 503. */
  let succeededAt: number;
  let failingAt: number;

  const send = async (n = 1) => {
    for (let i = 0; i < n; i++) {
      sent.push((await h.postel.outbound.send({ type: "flaky.ping", data: { n: sent.length } })).id);
    }
    await h.postel.drain();
  };

  beforeAll(async () => {
    h = await startHarness(storageName);
    flaky = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/flaky"),
      types: ["flaky.*"],
      retryPolicy: LinearBackoff({ maxAttempts: 0, step: "1s", jitter: 0 }),
      circuitBreaker: { minimumVolume: 1000 },
    });
    // A real receiver that answers 200, then 503 with a hostile body.
    h.receiver.answer("/flaky", 200, "fine");
    succeededAt = h.clock.now();
    await send();
    await h.clock.advanceAsync("30s");
    h.receiver.answer("/flaky", 503, HOSTILE.response);
    failingAt = h.clock.now();
    await send(2);
    await h.clock.advanceAsync("5s");
    await send();
  });

  afterAll(() => h?.close());

  test("shows the last status, error and response, the last success and since when it fails", async () => {
    const page = await h.text(`/endpoints/${flaky.id}`);
    expect(field(page, "last-status")).toContain('<strong class="mono">503</strong>');
    expect(field(page, "last-status")).toContain(formatTime(failingAt + 5_000));
    expect(field(page, "last-error")).toContain("HTTP 503");
    expect(field(page, "last-response")).toContain(`<pre class="snippet">${HOSTILE_RESPONSE_SHOWN}</pre>`);
    expect(field(page, "last-success")).toContain(formatTime(succeededAt));
    expect(field(page, "last-success")).not.toContain("around");
    expect(field(page, "failing-since")).toContain(formatTime(failingAt));
    expect(field(page, "failing-since")).not.toContain("around");
    expect(field(page, "probe")).toContain("none: the circuit is closed");
    // The hostile answer is text: no tag, no raw control character anywhere on the page.
    expect(page).not.toContain("<img");
    expect(page).not.toContain("\u001b");
    expect(page).not.toContain("\u0007");
  });

  test("lists the recent attempts newest first, each linked to its message", async () => {
    const table = element(await h.text(`/endpoints/${flaky.id}`), "activity-recent", "table");
    const rows = table.split("<tr>").slice(2);
    expect(rows).toHaveLength(4);
    const linked = rows.map((row) => /href="\/postel\/messages\/([^"]+)"/.exec(row)?.[1]);
    expect(linked).toEqual([...sent].reverse());
    expect(rows[0]).toContain(">503<");
    expect(rows[0]).toContain("HTTP 503");
    expect(rows[0]).toContain('<td data-label="#">1</td>');
    expect(rows[3]).toContain(">200<");
    expect(rows[3]).toContain(formatTime(succeededAt));
  });

  test("says 'around' when the last success is known only to its 10 s health bucket", async () => {
    // 25 more failures push the success out of the 20 newest attempts.
    await h.clock.advanceAsync("5s");
    await send(25);
    const page = await h.text(`/endpoints/${flaky.id}`);
    const bucket = (at: number) => formatTime(Math.floor(at / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS);
    expect(field(page, "last-success")).toContain(`around <time`);
    expect(field(page, "last-success")).toContain(bucket(succeededAt));
    expect(field(page, "last-success")).toContain("within 10 s");
    expect(field(page, "failing-since")).toContain("around");
    expect(field(page, "failing-since")).toContain(bucket(failingAt));
    expect(element(page, "activity-recent", "table").split("<tr>").slice(2)).toHaveLength(20);
  });

  test("says the endpoint is not failing once its receiver answers again", async () => {
    await h.clock.advanceAsync("1m");
    h.receiver.answer("/flaky", 200, "fine again");
    const recovered = h.clock.now();
    await send();
    const page = await h.text(`/endpoints/${flaky.id}`);
    expect(field(page, "failing-since")).toContain("not failing: the last attempt succeeded");
    expect(field(page, "last-success")).toContain(formatTime(recovered));
    expect(field(page, "last-response")).toContain('<pre class="snippet">fine again</pre>');
    // The last error stays in view: it says what went wrong before.
    expect(field(page, "last-error")).toContain("HTTP 503");
  });

  test("shows a 410'd delivery as failed permanently, with no success in the lookback", async () => {
    const gone = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/gone"),
      types: ["gone.*"],
    });
    h.receiver.answer("/gone", 410, "gone for good");
    await h.postel.outbound.send({ type: "gone.away", data: {} });
    await h.postel.drain();
    const page = await h.text(`/endpoints/${gone.id}`);
    expect(field(page, "last-status")).toContain('<strong class="mono">410</strong>');
    expect(field(page, "last-status")).toContain('<span class="badge bad">permanent</span>');
    expect(field(page, "last-success")).toContain("none in the last 24 h");
    expect(field(page, "failing-since")).toContain("or earlier: no success in the last 24 h");
    expect(element(page, "endpoint-failed", "a")).toContain("1 failed permanently");
    expect(element(page, "endpoint-failed", "a")).toContain(
      `href="/postel/dead-letters?status=failed&amp;endpoint=${gone.id}"`,
    );
    expect(element(page, "endpoint-dead-letters", "a")).toContain("0 dead letters");
    // The endpoints list has a Failed column beside the dead letters.
    const list = await h.text("/endpoints");
    const row = list.split("<tr>").find((r) => r.includes(h.receiver.url("/gone")))!;
    expect(row).toContain(
      `<td data-label="Failed"><a href="/postel/dead-letters?status=failed&amp;endpoint=${gone.id}">1</a></td>`,
    );
    const flakyRow = list.split("<tr>").find((r) => r.includes(h.receiver.url("/flaky")))!;
    expect(flakyRow).toMatch(/<td data-label="Dead letters"><a [^>]+>28<\/a><\/td>/);
    expect(flakyRow).toContain('<td data-label="Failed">0</td>');
  });

  test("shows a read-only operator the same card", async () => {
    const page = await h.text(`/endpoints/${flaky.id}`, "read-only");
    expect(field(page, "last-success")).toContain("<time");
    expect(element(page, "activity-recent", "table").split("<tr>").slice(2)).toHaveLength(20);
    expect(page).not.toContain('method="post"');
  });
});
