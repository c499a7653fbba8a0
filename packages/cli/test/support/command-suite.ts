import {
  type AttemptRecord,
  type DeliveryRecord,
  type Endpoint,
  ManualClock,
  type Message,
  type PostelInstance,
  type Storage,
} from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { formatTime } from "../../src/time.js";
import { type CliRun, postel, postelJson, spawnPostel } from "./cli.js";
import type { TestDatabase } from "./databases.js";
import { application, drainAll, startReceiver } from "./seed.js";

const BULK = 300;

/**
 * Every command, run as the built binary against a real database that a real application (Postel
 * with a receiver on 127.0.0.1) has written to: one healthy endpoint, one whose receiver answers 500,
 * one that answers 400 (a permanent failure), and one that dead-letters a few hundred messages (for
 * bulk replay). One test file per database, so they run in parallel.
 */
export function describeCommands(name: string, createDatabase: () => Promise<TestDatabase>): void {
  describe(`postel on ${name}`, () => {
    let database: TestDatabase;
    let app: PostelInstance<Storage<unknown>>;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let ok: Endpoint;
    let failing: Endpoint;
    let bulk: Endpoint;
    let rejecting: Endpoint;
    let delivered: string;
    let deadLettered: string;
    let rejected: string;
    const run = (...args: string[]) => postel(database.url, args);
    const json = <T = Record<string, unknown>>(...args: string[]) => postelJson<T>(database.url, args);

    beforeAll(async () => {
      database = await createDatabase();
      const migrated = await run("migrate");
      expect(migrated.code, migrated.stderr).toBe(0);
      receiver = await startReceiver();
      app = application(database.url);
      const endpoints = app.outbound.endpoints;
      ok = await endpoints.create({
        url: receiver.url("/ok"),
        types: ["order.created"],
        description: "healthy",
      });
      failing = await endpoints.create({ url: receiver.url("/fail"), types: ["order.failed"] });
      bulk = await endpoints.create({ url: receiver.url("/fail"), types: ["bulk.*"] });
      rejecting = await endpoints.create({ url: receiver.url("/bad"), types: ["order.rejected"] });
      delivered = (await app.outbound.send({ type: "order.created", data: { id: 1 } })).id;
      deadLettered = (await app.outbound.send({ type: "order.failed", data: { id: 2 } })).id;
      rejected = (await app.outbound.send({ type: "order.rejected", data: { id: 3 } })).id;
      await app.outbound.sendBatch(
        Array.from({ length: BULK }, (_, i) => ({ type: "bulk.item", data: { i } })),
      );
      await drainAll(app);
    }, 120_000);

    afterAll(async () => {
      await app?.close();
      await receiver?.close();
      await database?.drop();
    });

    test("migrate is idempotent and says what it migrated", async () => {
      expect(await json("migrate")).toEqual({ migrated: true, database: database.url });
      const again = await run("migrate");
      expect(again.code).toBe(0);
      expect(again.stdout).toContain("schema is up to date");
    });

    test("endpoints list prints a table, pages with --limit/--cursor, and --json is a page", async () => {
      const table = await run("endpoints", "list");
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^ID\s+STATE\s+URL/);
      for (const e of [ok, failing, bulk]) expect(table.stdout).toContain(e.id);
      const first = await json<{ items: Endpoint[]; nextCursor: string | null }>(
        "endpoints",
        "list",
        "--limit",
        "2",
      );
      expect(first.items.map((e) => e.id)).toEqual([ok.id, failing.id]);
      expect(first.nextCursor).not.toBeNull();
      const second = await json<{ items: Endpoint[]; nextCursor: string | null }>(
        "endpoints",
        "list",
        "--limit",
        "2",
        "--cursor",
        first.nextCursor!,
      );
      expect(second).toEqual({
        items: [expect.objectContaining({ id: bulk.id }), expect.objectContaining({ id: rejecting.id })],
        nextCursor: null,
      });
      const limited = await run("endpoints", "list", "--limit", "2");
      expect(limited.stderr).toContain(`--cursor ${first.nextCursor}`);
      const disabled = await json<{ items: Endpoint[] }>("endpoints", "list", "--state", "disabled");
      expect(disabled.items).toEqual([]);
    });

    test("endpoints show prints state, limits, why it fails and recent health, never the secret", async () => {
      const shown = await run("endpoints", "show", failing.id);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/state\s+active/);
      expect(shown.stdout).toMatch(/last status\s+500 (retryable|permanent), \d+ms, 20\S+Z \(.+ ago\)\n/);
      expect(shown.stdout).toMatch(/last response\s+boom: receiver is down\n/);
      expect(shown.stdout).toMatch(/last success\s+none in the last 24h\n/);
      expect(shown.stdout).toMatch(/attempts\s+1\n/);
      expect(shown.stdout).toMatch(/failures\s+1\n/);
      expect(shown.stdout).toMatch(/dead letters\s+1\n/);
      expect(shown.stdout).toMatch(/failed\s+0\n/);
      const data = await json<{ endpoint: Endpoint; health: Record<string, unknown>; activity: unknown }>(
        "endpoints",
        "show",
        ok.id,
      );
      expect(data.endpoint).toMatchObject({
        id: ok.id,
        url: ok.url,
        state: "active",
        description: "healthy",
      });
      expect(data.health).toMatchObject({
        id: ok.id,
        attempts: 1,
        failures: 0,
        failureRate: 0,
        deadLetters: 0,
        failed: 0,
      });
      expect(data.activity).toMatchObject({
        endpointId: ok.id,
        lastAttempt: { messageId: delivered, statusCode: 200, outcome: "success", responseSnippet: "thanks" },
        lastFailure: null,
        lastSuccess: { exact: true },
        failingSince: null,
        recent: [expect.objectContaining({ messageId: delivered })],
      });
    });

    test("endpoints create hides the new secret unless --show-secret, and secret <id> prints it", async () => {
      const created = await run(
        "endpoints",
        "create",
        "--url",
        receiver.url("/ok"),
        "--types",
        "a.*,b.*",
        "--description",
        "from the shell",
        "--header",
        "Authorization=Bearer s3cr3t-token",
        "--allow-private-networks",
      );
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout + created.stderr).not.toContain("whsec_");
      expect(created.stdout + created.stderr).not.toContain("s3cr3t-token");
      expect(created.stderr).toContain("postel endpoints secret ep_");
      const id = /^id\s+(\S+)/m.exec(created.stdout)![1]!;
      const stored = await app.outbound.endpoints.get(id);
      expect(stored).toMatchObject({ types: ["a.*", "b.*"], description: "from the shell" });
      expect(stored!.headers).toEqual({ Authorization: "Bearer s3cr3t-token" });

      const secret = await run("endpoints", "secret", id);
      expect(secret.stdout.trim()).toBe(await app.outbound.endpoints.secret(id));
      expect(secret.stdout).toMatch(/^whsec_\S+\n$/);
      expect(await json("endpoints", "secret", id)).toEqual({ endpointId: id, secret: secret.stdout.trim() });

      const asJson = await json<Endpoint & { secret?: string }>(
        "endpoints",
        "create",
        "--url",
        receiver.url("/ok"),
        "--allow-private-networks",
        "--header",
        "x-token=abc",
      );
      expect(asJson.secret).toBeUndefined();
      expect(asJson.headers).toEqual({ "x-token": "***" });
      const shown = await json<Endpoint & { secret: string }>(
        "endpoints",
        "create",
        "--url",
        receiver.url("/ok"),
        "--allow-private-networks",
        "--show-secret",
      );
      expect(shown.secret).toBe(await app.outbound.endpoints.secret(shown.id));
    });

    test("endpoints create refuses a private address unless allowed (exit 2)", async () => {
      const refused = await run("endpoints", "create", "--url", "http://127.0.0.1:9/hook");
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^postel: [A-Z_]+: /);
    });

    test("endpoints disable and enable move the state, with the reason", async () => {
      const disabled = await json<Endpoint>("endpoints", "disable", bulk.id, "--reason", "maintenance");
      expect(disabled).toMatchObject({ id: bulk.id, state: "disabled", disabledReason: "maintenance" });
      const shown = await run("endpoints", "show", bulk.id);
      expect(shown.stdout).toMatch(/disabled because\s+maintenance/);
      const enabled = await run("endpoints", "enable", bulk.id);
      expect(enabled.code).toBe(0);
      expect(enabled.stdout).toMatch(/state\s+active/);
      expect((await app.outbound.endpoints.get(bulk.id))!.state).toBe("active");
    });

    test("endpoints rotate-secret adds a secret, shown only with --show-secret", async () => {
      const before = await app.outbound.endpoints.secret(ok.id);
      const rotated = await run("endpoints", "rotate-secret", ok.id, "--overlap", "1h");
      expect(rotated.code).toBe(0);
      expect(rotated.stdout + rotated.stderr).not.toContain("whsec_");
      expect(rotated.stdout).toContain("for 1h");
      const after = await app.outbound.endpoints.secret(ok.id);
      expect(after).not.toBe(before);
      const shown = await json<{ secret: string; overlapMs: number }>(
        "endpoints",
        "rotate-secret",
        ok.id,
        "--show-secret",
      );
      expect(shown).toEqual({
        endpointId: ok.id,
        overlapMs: 86_400_000,
        secret: await app.outbound.endpoints.secret(ok.id),
      });
    });

    test("messages list filters by status and type, newest first, and pages", async () => {
      const all = await json<{ items: Message[]; nextCursor: string | null }>(
        "messages",
        "list",
        "--limit",
        "1000",
      );
      expect(all.items).toHaveLength(BULK + 3);
      expect(all.nextCursor).toBeNull();
      const dead = await json<{ items: Message[] }>(
        "messages",
        "list",
        "--status",
        "dead-lettered",
        "--type",
        "order.failed",
      );
      expect(dead.items.map((m) => m.id)).toEqual([deadLettered]);
      const page = await json<{ items: Message[]; nextCursor: string }>(
        "messages",
        "list",
        "--limit",
        "5",
        "--since",
        "1h",
      );
      expect(page.items).toHaveLength(5);
      const next = await json<{ items: Message[] }>(
        "messages",
        "list",
        "--limit",
        "5",
        "--cursor",
        page.nextCursor,
      );
      expect(next.items[0]!.createdAt).toBeLessThanOrEqual(page.items[4]!.createdAt);
      expect(next.items.map((m) => m.id)).not.toContain(page.items[4]!.id);
      const table = await run("messages", "list", "--type", "order.created");
      expect(table.stdout).toMatch(new RegExp(`${delivered}\\s+order.created\\s+dispatched`));
      const none = await run("messages", "list", "--until", "2000-01-01T00:00:00Z");
      expect(none.code).toBe(0);
      expect(none.stderr).toContain("No messages.");
    });

    test("messages show prints the message, its deliveries and the attempt trail", async () => {
      const shown = await run("messages", "show", deadLettered);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/status\s+dead-lettered/);
      expect(shown.stdout).toContain('{"id":2}');
      expect(shown.stdout).toMatch(new RegExp(`${failing.id}\\s+dead-lettered\\s+1`));
      expect(shown.stdout).toMatch(/1\s+\S+Z\s+ep_\S+\s+500\s+permanent|1\s+\S+Z\s+ep_\S+\s+500\s+retryable/);
      expect(shown.stdout).toContain("boom: receiver is down");
      const data = await json<{ message: Message; deliveries: DeliveryRecord[]; attempts: AttemptRecord[] }>(
        "messages",
        "show",
        delivered,
      );
      expect(data.message).toMatchObject({ id: delivered, status: "dispatched", data: { id: 1 } });
      expect(data.deliveries).toEqual([expect.objectContaining({ endpointId: ok.id, status: "succeeded" })]);
      expect(data.attempts).toEqual([
        expect.objectContaining({
          endpointId: ok.id,
          statusCode: 200,
          outcome: "success",
          responseSnippet: "thanks",
        }),
      ]);
    });

    test("dead-letters list shows what ran out of retries, per endpoint", async () => {
      const all = await json<{ items: Record<string, unknown>[]; nextCursor: string | null }>(
        "dead-letters",
        "list",
        "--limit",
        "1000",
      );
      expect(all.items).toHaveLength(BULK + 1);
      // A permanent failure is not a dead letter: `failed list` has it.
      expect(all.items.map((d) => d["messageId"])).not.toContain(rejected);
      const one = await json<{ items: Record<string, unknown>[] }>(
        "dead-letters",
        "list",
        "--endpoint",
        failing.id,
      );
      expect(one.items).toEqual([
        {
          status: "dead-lettered",
          deliveryId: expect.any(String),
          messageId: deadLettered,
          endpointId: failing.id,
          webhookId: expect.any(String),
          type: "order.failed",
          tenantId: null,
          attemptsMade: 1,
          lastError: expect.stringContaining("500"),
          createdAt: expect.any(Number),
          deadLetteredAt: expect.any(Number),
        },
      ]);
      const table = await run("dead-letters", "list", "--endpoint", failing.id, "--since", "1h");
      expect(table.stdout).toMatch(new RegExp(`${deadLettered}\\s+${failing.id}\\s+order.failed\\s+1`));
      const page = await json<{ nextCursor: string | null }>("dead-letters", "list", "--limit", "10");
      expect(page.nextCursor).not.toBeNull();
    });

    test("failed list shows what failed permanently, and no dead letter; it says how to replay them", async () => {
      const all = await json<{ items: Record<string, unknown>[]; nextCursor: string | null }>(
        "failed",
        "list",
      );
      expect(all).toEqual({
        items: [
          {
            status: "failed",
            deliveryId: expect.any(String),
            messageId: rejected,
            endpointId: rejecting.id,
            webhookId: expect.any(String),
            type: "order.rejected",
            tenantId: null,
            attemptsMade: 1,
            lastError: expect.stringContaining("400"),
            createdAt: expect.any(Number),
            deadLetteredAt: expect.any(Number),
          },
        ],
        nextCursor: null,
      });
      const table = await run("failed", "list", "--since", "1h");
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^MESSAGE\s+ENDPOINT\s+TYPE\s+ATTEMPTS\s+FAILED\s+LAST ERROR\n/);
      expect(table.stdout).toMatch(
        new RegExp(`${rejected}\\s+${rejecting.id}\\s+order.rejected\\s+1\\s+20\\S+Z\\s+HTTP 400`),
      );
      expect(table.stdout).not.toContain(deadLettered);
      const none = await run("failed", "list", "--endpoint", failing.id);
      expect([none.code, none.stdout, none.stderr]).toEqual([0, "", "No permanently failed deliveries.\n"]);
      const help = await run("failed", "list", "--help");
      expect(help.stdout).toContain("postel replay --endpoint <id> --since <time> --status failed --yes");
    });

    test("stats prints the backlog, dead letters, permanent failures and per-endpoint failure rates", async () => {
      const data = await json<{ endpoints: unknown[] }>("stats", "--window", "1h");
      expect(data).toMatchObject({
        windowMs: 3_600_000,
        backlog: { due: 0, held: 0, unfanned: 0 },
        deadLetters: BULK + 1,
        failed: 1,
        countCap: 1000,
        capped: false,
        attempts: { total: BULK + 3, failures: BULK + 2 },
      });
      expect(data.endpoints).toContainEqual(expect.objectContaining({ id: ok.id, attempts: 1, failures: 0 }));
      const table = await run("stats");
      expect(table.stdout).toMatch(/dead letters\s+301\n/);
      expect(table.stdout).toMatch(/failed\s+1\n/);
      expect(table.stdout).toMatch(
        /ENDPOINT\s+STATE\s+URL\s+DUE\s+IN FLIGHT\s+HELD\s+DEAD\s+FAILED\s+ATTEMPTS\s+FAIL %\n/,
      );
      // DUE, IN FLIGHT, HELD, DEAD, FAILED, ATTEMPTS, FAIL %.
      expect(table.stdout).toMatch(
        new RegExp(`${failing.id}\\s+active\\s+\\S+\\s+0\\s+0\\s+0\\s+1\\s+0\\s+1\\s+100.0%`),
      );
      expect(table.stdout).toMatch(
        new RegExp(`${rejecting.id}\\s+active\\s+\\S+\\s+0\\s+0\\s+0\\s+0\\s+1\\s+1\\s+100.0%`),
      );
      expect(table.stderr).toBe("");
      const exact = await json<{ countCap: number | null; failed: number }>("stats", "--exact");
      expect(exact).toMatchObject({ countCap: null, failed: 1 });
    });

    test("replay by message re-enqueues it; by endpoint it needs --yes and reports progress", async () => {
      const one = await json<{ replayed: number; deliveries: { messageId: string }[] }>(
        "replay",
        "--message",
        deadLettered,
      );
      expect(one).toMatchObject({ replayed: 1, deliveries: [{ messageId: deadLettered }] });
      expect((await app.outbound.messages.get(deadLettered))!.status).toBe("pending");

      const unconfirmed = await run("replay", "--endpoint", bulk.id, "--since", "1h");
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toContain("--yes");
      const bulkReplay = await run(
        "replay",
        "--endpoint",
        bulk.id,
        "--since",
        "1h",
        "--status",
        "dead-lettered",
        "--fresh-webhook-id",
        "--yes",
        "--progress",
      );
      expect(bulkReplay.code, bulkReplay.stderr).toBe(0);
      expect(bulkReplay.stdout).toContain(`Replayed ${BULK} deliveries of ${BULK} messages`);
      expect(bulkReplay.stderr).toContain(`replaying ${BULK}/${BULK} (100%)`);
      expect((await json<{ backlog: { due: number } }>("stats")).backlog.due).toBe(BULK + 1);
      await drainAll(app);
      const again = await run(
        "replay",
        "--endpoint",
        bulk.id,
        "--since",
        "1h",
        "--status",
        "succeeded",
        "--yes",
      );
      expect(again.stdout).toContain("Nothing to replay");
    });

    test("unknown ids exit 3 with the code and message", async () => {
      const cases = [
        ["messages", "show", "msg_nope"],
        ["endpoints", "show", "ep_nope"],
        ["endpoints", "enable", "ep_nope"],
        ["endpoints", "secret", "ep_nope"],
        ["replay", "--message", "msg_nope"],
      ];
      const results = await Promise.all(cases.map((args) => run(...args)));
      for (const [i, result] of results.entries()) {
        expect(result.code, cases[i]!.join(" ")).toBe(3);
        expect(result.stderr).toMatch(
          /^postel: (MESSAGE|ENDPOINT)_NOT_FOUND: No (message|endpoint) with id "\w+_nope"/,
        );
      }
    });

    test("no command prints a secret unless asked by name, in tables or JSON", async () => {
      const commands = [
        ["endpoints", "list"],
        ["endpoints", "show", ok.id],
        ["endpoints", "show", failing.id, "--window", "1d"],
        ["endpoints", "enable", ok.id],
        ["endpoints", "disable", failing.id],
        ["endpoints", "enable", failing.id],
        ["endpoints", "rotate-secret", failing.id],
        ["messages", "list"],
        ["messages", "show", delivered],
        ["dead-letters", "list"],
        ["stats"],
      ];
      const outputs: CliRun[] = [];
      for (const args of commands)
        outputs.push(...(await Promise.all([run(...args), run(...args, "--json")])));
      for (const output of outputs) {
        expect(output.code, output.stderr).toBe(0);
        expect(output.stdout + output.stderr).not.toMatch(/whsec_|whsk_/);
      }
    }, 90_000);

    test("tail prints an attempt another process makes while it runs, and exits 0 on Ctrl-C", async () => {
      const tail = spawnPostel(database.url, ["tail", "--since", "0s", "--json"]);
      try {
        await tail.until((o) => o.stderr.includes("Tailing attempts since"));
        const { id } = await app.outbound.send({ type: "order.created", data: { id: "live" } });
        await drainAll(app);
        await tail.until((o) => o.stdout.includes(id));
        const lines = tail.output.stdout
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as AttemptRecord);
        expect(lines).toContainEqual(
          expect.objectContaining({ messageId: id, endpointId: ok.id, statusCode: 200, outcome: "success" }),
        );
        tail.child.kill("SIGINT");
        expect(await tail.exited).toBe(0);
      } finally {
        tail.child.kill("SIGKILL");
      }
    });

    test("prune deletes the history older than --older-than, asks for --yes, and reports progress", async () => {
      // An application whose clock is two days behind: what it sends and delivers is two days old.
      const past = application(database.url, new ManualClock(Date.now() - 2 * 86_400_000));
      try {
        const archive = await past.outbound.endpoints.create({
          url: receiver.url("/ok"),
          types: ["archive.*"],
        });
        const old = await past.outbound.sendBatch(
          Array.from({ length: 3 }, (_, i) => ({ type: "archive.item", data: { i } })),
        );
        await drainAll(past);
        const unconfirmed = await run("prune", "--older-than", "1d");
        expect(unconfirmed.code).toBe(2);
        expect(unconfirmed.stderr).toContain("--yes");
        expect(await app.outbound.messages.get(old[0]!.id)).not.toBeNull();

        // Endpoints earlier tests created for every type get them too: one attempt per delivery, and
        // one health bucket per endpoint (the clock stood still).
        const deliveries = (
          await Promise.all(old.map(({ id }) => past.outbound.messages.deliveries(id)))
        ).flat();
        const buckets = new Set(deliveries.map((d) => d.endpointId)).size;
        expect(deliveries.map((d) => d.endpointId)).toContain(archive.id);

        const pruned = await run("prune", "--older-than", "1d", "--yes", "--progress", "--batch-size", "2");
        expect(pruned.code, pruned.stderr).toBe(0);
        expect(pruned.stdout).toMatch(
          new RegExp(
            `^Deleted 3 messages \\(${deliveries.length} deliveries, ${deliveries.length} attempts\\) and ${buckets} health buckets older than 20\\d\\d-`,
          ),
        );
        expect(pruned.stderr).toContain(`pruned 3 messages, ${buckets} health buckets`);
        for (const { id } of old) expect(await app.outbound.messages.get(id)).toBeNull();
        expect(await app.outbound.messages.get(delivered)).not.toBeNull(); // recent history stays
        expect((await app.outbound.endpoints.get(archive.id))?.id).toBe(archive.id);

        const again = await json("prune", "--older-than", "1d", "--yes");
        expect(again).toMatchObject({
          messages: 0,
          deliveries: 0,
          attempts: 0,
          healthBuckets: 0,
          complete: true,
        });
        expect(Date.parse(String(again["finishedBefore"]))).toBeLessThan(Date.now() - 86_000_000);
      } finally {
        await past.close();
      }
    });

    test("tail prints readable lines, filtered by endpoint", async () => {
      const tail = spawnPostel(database.url, ["tail", "--since", "0s", "--endpoint", failing.id]);
      try {
        await tail.until((o) => o.stderr.includes("Tailing attempts since"));
        await app.outbound.send({ type: "order.created", data: { id: "not this one" } });
        const { id } = await app.outbound.send({ type: "order.failed", data: { id: "live" } });
        await drainAll(app);
        await tail.until((o) => o.stdout.includes(id));
        expect(tail.output.stdout).toMatch(
          new RegExp(`Z  ${failing.id}  ${id}  #1  \\w+  500  \\d+ms  HTTP 500`),
        );
        expect(tail.output.stdout).not.toContain(ok.id);
        tail.child.kill("SIGINT");
        expect(await tail.exited).toBe(0);
      } finally {
        tail.child.kill("SIGKILL");
      }
    });

    // Last: the messages it sends would change the counts the listings above assert.
    test("endpoints send-test queues one event for that endpoint only; the workers send it, marked as a test", async () => {
      const catalog = new URL("../fixtures/events.mjs", import.meta.url).pathname;
      const before = receiver.requests.length;
      // ok subscribes to order.created only: the test reaches it anyway, and no other endpoint.
      const queued = await run(
        "endpoints",
        "send-test",
        ok.id,
        "--type",
        "order.cancelled",
        "--catalog",
        catalog,
      );
      expect(queued.code, queued.stderr).toBe(0);
      const id = queued.stdout.trim();
      expect(id).toMatch(/^msg_/);
      expect(queued.stderr).toContain(`postel messages show ${id}`);
      await drainAll(app);
      const sent = receiver.requests.slice(before);
      expect(sent.map((request) => request.path)).toEqual(["/ok"]);
      expect(JSON.parse(sent[0]!.body.toString())).toMatchObject({
        type: "order.cancelled",
        data: { id: "ord_1" },
      });
      const shown = await json<{ message: Message }>("messages", "show", id);
      expect(shown.message).toMatchObject({ id, testEndpointId: ok.id });
      // Without a catalog the data must be given; the catalog refuses what it does not declare.
      const given = await json<{ messageId: string }>(
        "endpoints",
        "send-test",
        ok.id,
        "--type",
        "ping",
        "--data",
        '{"n":1}',
      );
      expect(given.messageId).toMatch(/^msg_/);
      const noData = await run("endpoints", "send-test", ok.id, "--type", "ping");
      expect(noData.code).toBe(2);
      expect(noData.stderr).toContain("without an event catalog");
      const undeclared = await run("endpoints", "send-test", ok.id, "--type", "ping", "--catalog", catalog);
      expect(undeclared.code).toBe(2);
      expect(undeclared.stderr).toContain("UNKNOWN_EVENT_TYPE");
      await drainAll(app);
    });

    // After send-test, for the same reason.
    test("endpoints show says why an endpoint fails: its 503 and body, the last success, since when, each attempt", async () => {
      const why = await app.outbound.endpoints.create({ url: receiver.url("/why"), types: ["why.*"] });
      receiver.answer("/why", 200, "fine");
      const first = (await app.outbound.send({ type: "why.ping", data: { n: 1 } })).id;
      await drainAll(app);
      receiver.answer("/why", 503, "down for maintenance until 04:00");
      const second = (await app.outbound.send({ type: "why.ping", data: { n: 2 } })).id;
      await drainAll(app);
      // Endpoints earlier tests created for every type get these messages too.
      const attemptOf = async (id: string) =>
        (await app.outbound.messages.attempts(id)).find((a) => a.endpointId === why.id);
      const success = await attemptOf(first);
      const failure = await attemptOf(second);
      const at = formatTime;

      const shown = await run("endpoints", "show", why.id);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(
        new RegExp(
          `last status\\s+503 (retryable|permanent), \\d+ms, ${at(failure!.startedAt)} \\(.+ ago\\)\\n`,
        ),
      );
      expect(shown.stdout).toMatch(new RegExp(`last error\\s+HTTP 503, ${at(failure!.startedAt)} `));
      expect(shown.stdout).toMatch(/last response\s+down for maintenance until 04:00\n/);
      expect(shown.stdout).toMatch(new RegExp(`last success\\s+${at(success!.startedAt)} \\(.+ ago\\)\\n`));
      expect(shown.stdout).toMatch(new RegExp(`failing since\\s+${at(failure!.startedAt)} \\(.+ ago\\)\\n`));
      expect(shown.stdout).toMatch(/next probe\s+none: the circuit is closed\n/);
      expect(shown.stdout).toMatch(/dead letters\s+1\n/);
      // Newest first: the 503, then the 200.
      expect(shown.stdout).toMatch(
        new RegExp(
          `TIME\\s+#\\s+OUTCOME\\s+STATUS\\s+LATENCY\\s+MESSAGE\\s+ERROR\\n` +
            `${at(failure!.startedAt)}\\s+1\\s+(retryable|permanent)\\s+503\\s+\\d+ms\\s+${second}\\s+HTTP 503\\n` +
            `${at(success!.startedAt)}\\s+1\\s+success\\s+200\\s+\\d+ms\\s+${first}\\n$`,
        ),
      );

      const data = await json<{ endpoint: Endpoint; health: unknown; countCap: number; activity: unknown }>(
        "endpoints",
        "show",
        why.id,
      );
      expect(data.countCap).toBe(10_000);
      expect(data.activity).toMatchObject({
        endpointId: why.id,
        state: "active",
        lastAttempt: {
          id: failure!.id,
          statusCode: 503,
          responseSnippet: "down for maintenance until 04:00",
        },
        lastFailure: { id: failure!.id },
        lastSuccess: { at: success!.startedAt, exact: true },
        failingSince: { at: failure!.startedAt, exact: true },
        nextProbeAt: null,
        waitingForTraffic: false,
        recent: [expect.objectContaining({ id: failure!.id }), expect.objectContaining({ id: success!.id })],
        lookbackMs: 86_400_000,
      });
    });
  });
}
