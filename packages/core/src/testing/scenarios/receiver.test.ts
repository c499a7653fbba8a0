import { performance } from "node:perf_hooks";
import { afterEach, expect, test } from "vitest";
import { type ScenarioReceiver, startScenarioReceiver } from "./receiver.js";

let receiver: ScenarioReceiver;
afterEach(() => receiver?.close());

const post = (path: string) =>
  fetch(receiver.url(path), { method: "POST", body: "{}", headers: { "webhook-id": "msg_1" } });

test("answers each path from its script and records the request with its webhook-id", async () => {
  receiver = await startScenarioReceiver();
  receiver.script("/down", { status: 503, headers: { "retry-after": "7" }, body: "later" });
  receiver.script("/flaky", (index) => (index === 0 ? 500 : 200));
  const down = await post("/down");
  expect([down.status, down.headers.get("retry-after"), await down.text()]).toEqual([503, "7", "later"]);
  expect((await post("/flaky")).status).toBe(500);
  expect((await post("/flaky")).status).toBe(200);
  expect((await post("/other")).status).toBe(200);
  expect(receiver.on("/down")).toMatchObject([{ webhookId: "msg_1", body: Buffer.from("{}") }]);
  expect(receiver.requests.map((r) => r.path)).toEqual(["/down", "/flaky", "/flaky", "/other"]);
});

test("a delayed answer comes after the delay; a reset fails the request", async () => {
  receiver = await startScenarioReceiver();
  receiver.script("/slow", { delayMs: 50, status: 202 });
  receiver.script("/reset", "reset");
  const sent = performance.now();
  expect((await post("/slow")).status).toBe(202);
  expect(performance.now() - sent).toBeGreaterThanOrEqual(45);
  await expect(post("/reset")).rejects.toThrow();
  expect(receiver.on("/reset")).toHaveLength(1);
});

test("close() ends hung and trickling connections at once", async () => {
  receiver = await startScenarioReceiver();
  receiver.script("/hang", "hang");
  receiver.script("/trickle", "trickle");
  const hung = post("/hang").catch((error: unknown) => error);
  const trickling = await post("/trickle");
  expect(trickling.status).toBe(200);
  const body = trickling.text().catch((error: unknown) => error);
  while (receiver.on("/hang").length === 0) await new Promise((resolve) => setImmediate(resolve));
  const closing = performance.now();
  await receiver.close();
  expect(performance.now() - closing).toBeLessThan(500);
  expect(await hung).toBeInstanceOf(Error);
  expect(await body).toBeInstanceOf(Error);
});
