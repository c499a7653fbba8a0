import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { ExponentialBackoff, LinearBackoff, Postel } from "@postel/core";
import { generateSecret } from "@postel/signing";
import { SqliteStorage } from "@postel/storage-sqlite";
import { startDashboard } from "./dashboard-server.js";
import { trackEndpoint } from "./endpoint-timeline.js";
import { LiveView, progressRows, table } from "./progress.js";
import { startReceiver } from "./receiver.js";
import { runCli } from "./run-cli.js";

const ORDERS = 10;
const AUTO_DISABLE_WINDOW_S = 30;
const DEADLINE_MS = 60_000;
// Set to 1 to keep the dashboard (and the workers and receiver behind it) running after the checks.
const KEEP_OPEN = process.env["POSTEL_DEMO_KEEP_OPEN"] === "1";
const started = Date.now();
const checks: { what: string; ok: boolean }[] = [];
const check = (what: string, ok: boolean) => checks.push({ what, ok });
const say = (text: string) => process.stdout.write(`${text}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

// 1. An app database on embedded SQLite: the business table and Postel's outbox in one file.
const dir = mkdtempSync(join(tmpdir(), "postel-demo-"));
const client = createClient({ url: `file:${join(dir, "shop.db")}` });
await client.execute("CREATE TABLE orders (id TEXT PRIMARY KEY, total INTEGER NOT NULL)");
const storage = SqliteStorage({ client });

const postel = Postel({
  outbound: {
    storage,
    // Short schedules so the whole story fits in well under a minute: the defaults retry over three
    // days, open a circuit for 5m at a time and disable only an endpoint failing for a whole hour.
    retryPolicy: ExponentialBackoff({ schedule: ["1s", "2s", "3s"], jitter: 0.1 }),
    circuitBreaker: { threshold: 0.5, cooldown: "1s", window: "30s", minimumVolume: 5 },
    autoDisable: { failureRate: 0.9, window: `${AUTO_DISABLE_WINDOW_S}s`, minAttempts: 12 },
    workers: { pollInterval: "100ms" },
    http: { allowPrivateNetworks: true, timeout: "2s" },
  },
});
const events = { disabled: 0, retries: 0 };
postel.on("endpoint-disabled", () => events.disabled++);
postel.on("retry-scheduled", () => events.retries++);
postel.on("error", ({ error, context }) => say(`  (worker error in ${context}: ${String(error)})`));

// 2. The receiver app (secrets shared with it up front), then three endpoints pointing at it.
const secrets = { healthy: generateSecret(), flaky: generateSecret(), broken: generateSecret() };
const receiver = await startReceiver(secrets);
const healthy = await postel.outbound.endpoints.create({
  url: receiver.url("/healthy"),
  types: ["order.*"],
  secret: secrets.healthy,
});
const flaky = await postel.outbound.endpoints.create({
  url: receiver.url("/flaky"),
  types: ["order.*"],
  secret: secrets.flaky,
  // This receiver is known to wobble: let it fail more before its circuit opens.
  circuitBreaker: { threshold: 0.95, minimumVolume: 50 },
  autoDisable: { failureRate: 0.99, minAttempts: 100 },
});
const broken = await postel.outbound.endpoints.create({
  url: receiver.url("/broken"),
  types: ["order.*"],
  secret: secrets.broken,
  // Quick retries: one probe a second for about 20s, so the open circuit is still being probed when
  // auto-disable's condition is met (the first deliveries dead-letter on the way).
  retryPolicy: LinearBackoff({ maxAttempts: 2, step: "250ms" }),
});
const named = [
  { name: "healthy", id: healthy.id, path: "/healthy" },
  { name: "flaky", id: flaky.id, path: "/flaky" },
  { name: "broken", id: broken.id, path: "/broken" },
] as const;
const brokenTimeline = trackEndpoint(postel, broken.id, started);

say("Postel demo — embedded SQLite, a real receiver, three endpoints\n");

// The operator's dashboard on 127.0.0.1, open to whoever holds this run's token (nobody else).
const dashboard = await startDashboard(postel);
say(`  Dashboard: ${dashboard.loginUrl}`);
say("  (the token in the URL is made for this run: opening it once stores it in a cookie for this site;");
say(
  `  without it the dashboard answers 403.${KEEP_OPEN ? "" : " Set POSTEL_DEMO_KEEP_OPEN=1 to keep it open after the checks."})\n`,
);

// 3. Business writes and send() in one transaction. One transaction is rolled back on purpose.
const committed: string[] = [];
for (let i = 1; i <= ORDERS + 1; i++) {
  const order = { id: `ord_${i}`, total: i * 1_000 };
  const rollBack = i === ORDERS + 1;
  const tx = await client.transaction("write");
  try {
    await tx.execute({ sql: "INSERT INTO orders (id, total) VALUES (?, ?)", args: [order.id, order.total] });
    const { id } = await postel.outbound.send({ type: "order.created", data: order }, { tx });
    if (rollBack) throw new Error("payment declined");
    await tx.commit();
    committed.push(id);
  } catch {
    await tx.rollback();
    say(`  order ${order.id}: transaction rolled back — its webhook must never exist`);
  } finally {
    tx.close();
  }
}
say(`  ${committed.length} orders committed, each with its webhook in the same transaction\n`);

// 4. Run the workers and watch.
await postel.start();
const view = new LiveView();
const rows = () => progressRows(postel.outbound, [...named]);
async function until(title: string, done: () => Promise<boolean>): Promise<boolean> {
  while (Date.now() - started < DEADLINE_MS) {
    view.show(`${title} (${((Date.now() - started) / 1000).toFixed(1)}s)`, table(await rows()));
    if (await done()) {
      view.show(`${title} — done (${((Date.now() - started) / 1000).toFixed(1)}s)`, table(await rows()));
      view.release();
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  view.release();
  return false;
}

const settled = await until(
  "Delivering: healthy flows, flaky retries, broken opens its circuit, fails its probes and is disabled",
  async () => {
    const [h, f, b] = await rows();
    return h!.delivered === ORDERS && f!.delivered === ORDERS && b!.state === "disabled" && b!.retrying === 0;
  },
);

// The broken endpoint's story: the breaker first, then failed probes, then auto-disable.
const { firstFailure, opened, failedProbes, disabled } = brokenTimeline;
const disabledAt = disabled[0]?.at ?? null;
const probesBefore = failedProbes.filter((at) => disabledAt === null || at <= disabledAt);
say("\nThe broken endpoint, step by step:");
if (firstFailure !== null) say(`  +${seconds(firstFailure)}  its first 503s`);
if (opened !== null)
  say(
    `  +${seconds(opened)}  the breaker opens its circuit (a burst never disables): one probe per cooldown`,
  );
if (probesBefore.length > 0)
  say(
    `  +${seconds(probesBefore[0]!)} to +${seconds(probesBefore.at(-1)!)}  ${probesBefore.length} probes fail, each re-opening the circuit`,
  );
for (const d of disabled) say(`  +${seconds(d.at)}  ${d.reason}`);
say(
  `  → the breaker acted first; auto-disable waited until the failures spanned its ${AUTO_DISABLE_WINDOW_S}s window`,
);
say("    (back to the window's head; health is counted in 10s buckets, so a window this short is coarse)");

check("healthy and flaky receive every order; broken is auto-disabled with nothing left in flight", settled);
check(
  "broken: the breaker acted first, opening its circuit before it was disabled",
  opened !== null && disabledAt !== null && opened <= disabledAt,
);
check(
  `broken: its probes kept failing until it was disabled (${probesBefore.length} of them)`,
  probesBefore.length >= 2,
);
// The window's head (its first 13s) must hold failures and health is counted in 10s buckets, so a
// 30s window disables 7s to 18s after the first failure, depending on where in its bucket that fell.
const failingFor = disabledAt === null || firstFailure === null ? null : disabledAt - firstFailure;
check(
  `broken: auto-disabled once, ${failingFor === null ? "never" : `${seconds(failingFor)} after its first 503`} (not on the burst), its failures spanning the window`,
  disabled.length === 1 &&
    events.disabled === 1 &&
    failingFor !== null &&
    failingFor >= (AUTO_DISABLE_WINDOW_S * 1000) / 5,
);
check("the flaky endpoint's failures were retried", events.retries >= ORDERS * 2);

// 5. Fix the broken receiver, re-enable the endpoint (held deliveries resume), replay the dead letters.
say(
  "\nThe broken receiver is fixed: enable() resumes its held deliveries; replay() re-sends its dead letters\n",
);
receiver.fixBroken();
await postel.outbound.endpoints.enable(broken.id);
const replayed = await postel.outbound.replay(
  { endpointId: broken.id, since: started },
  { status: ["dead-lettered"] },
);
say(`  replayed ${replayed.length} dead-lettered deliveries`);
const recovered = await until(
  "Recovering the broken endpoint",
  async () => (await rows())[2]!.delivered === ORDERS,
);
check("after enable + replay, the broken endpoint receives every order", recovered);
check("some deliveries had been dead-lettered and were replayed", replayed.length > 0);

// 6. The receiver deduplicates: replaying a delivered message with the same webhook-id runs nothing twice.
const [again] = await postel.outbound.replay({ messageId: committed[0]! }, { status: ["succeeded"] });
await until(
  "Re-sending one delivered webhook with its original webhook-id",
  async () => receiver.log.duplicates > 0 || again === undefined,
);
check(
  "the receiver answered a re-sent webhook as a duplicate without running its handler",
  receiver.log.duplicates > 0,
);

// 7. Verify what the receiver handled, and what never left.
for (const { name, path } of named) {
  const handled = receiver.log.handled.get(path) ?? [];
  const exact = handled.length === committed.length && committed.every((id) => handled.includes(id));
  check(`${name}: the handler ran exactly once per committed order`, exact);
}
const rolledBackVisible =
  (await postel.outbound.messages.list({ limit: 100 })).items.length !== committed.length;
check("the rolled-back order's webhook was never enqueued", !rolledBackVisible);
await postel.stop();

// The dashboard answers the token's holder with the orders' messages, and nobody else.
const anonymous = await fetch(dashboard.url);
const login = await fetch(dashboard.loginUrl, { redirect: "manual" });
const messagesPage = await fetch(`${dashboard.url}messages`, { headers: { cookie: dashboard.cookie } });
const listed = await messagesPage.text();
check(
  `the dashboard answers ${messagesPage.status} to the token's holder (its messages page lists the orders), ${anonymous.status} without the token`,
  messagesPage.status === 200 &&
    committed.every((id) => listed.includes(id)) &&
    anonymous.status === 403 &&
    login.status === 303 &&
    (login.headers.get("set-cookie") ?? "").includes("HttpOnly"),
);

// 8. The summary: per endpoint, and one message's full audit trail.
say("\nSummary");
const summary = [];
const delivered = new Map((await rows()).map((row) => [row.endpoint, row.delivered]));
for (const { name, id, path } of named) {
  const answered = receiver.log.answered.get(path) ?? [];
  summary.push({
    endpoint: name,
    state: (await postel.outbound.endpoints.get(id))?.state ?? "?",
    "HTTP attempts": answered.length,
    "2xx": answered.filter((s) => s < 300).length,
    "4xx": answered.filter((s) => s >= 400 && s < 500).length,
    "5xx": answered.filter((s) => s >= 500).length,
    delivered: delivered.get(name) ?? 0,
  });
}
say(table(summary));

// 9. What an operator sees from a shell: the `postel` CLI on the same SQLite file.
const dbFile = join(dir, "shop.db");
for (const args of [["stats"], ["messages", "show", committed[1]!]]) {
  say(`\n$ postel ${args.join(" ")}`);
  const run = runCli(args, dbFile);
  say(run.output);
  check(`\`postel ${args[0]}\` reads the outbox from the shell and exits 0`, run.status === 0);
}

say("\nChecks");
for (const c of checks) say(`  ${c.ok ? "✓" : "✗"} ${c.what}`);
const failed = checks.filter((c) => !c.ok);
if (failed.length > 0) {
  say(`\n${failed.length} check(s) failed: Postel did not behave as expected.`);
  await shutDown();
  process.exit(1);
}
say(`\nAll ${checks.length} checks passed in ${((Date.now() - started) / 1000).toFixed(1)}s.`);

async function shutDown(): Promise<void> {
  await dashboard.close();
  await postel.close();
  await receiver.close();
  client.close();
  rmSync(dir, { recursive: true, force: true });
}
if (KEEP_OPEN) {
  // Workers run again, so replays from the dashboard reach the (mended) receiver.
  await postel.start();
  say(`\nThe dashboard stays open at ${dashboard.loginUrl}\nPress Ctrl-C to stop.`);
  process.once("SIGINT", () => void shutDown());
  process.once("SIGTERM", () => void shutDown());
} else {
  await shutDown();
}
