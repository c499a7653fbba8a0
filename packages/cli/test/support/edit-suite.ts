import { hostname, userInfo } from "node:os";
import { type Endpoint, ManualClock, type PostelInstance, type Storage } from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { main } from "../../src/main.js";
import { postel, postelJson } from "./cli.js";
import type { TestDatabase } from "./databases.js";
import { application, drainAll, startReceiver } from "./seed.js";

/**
 * The commands that change things one at a time (endpoints update and delete, replay by delivery,
 * dry runs), on a database of their own that a real application writes to, so the counts the
 * command suite asserts stay put. One test file per database.
 */
export function describeEditCommands(name: string, createDatabase: () => Promise<TestDatabase>): void {
  describe(`postel's editing commands on ${name}`, () => {
    let database: TestDatabase;
    let app: PostelInstance<Storage<unknown>>;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let failing: Endpoint;
    let deadLettered: string;
    const run = (...args: string[]) => postel(database.url, args);
    const json = <T = Record<string, unknown>>(...args: string[]) => postelJson<T>(database.url, args);
    // A snapshot of everything replay and prune could change.
    const state = async () => {
      const { items } = await app.outbound.messages.list({ limit: 1000 });
      const deliveries = await Promise.all(items.map((m) => app.outbound.messages.deliveries(m.id)));
      return { messages: items.map((m) => [m.id, m.status]), deliveries: deliveries.flat() };
    };

    beforeAll(async () => {
      database = await createDatabase();
      expect((await run("migrate")).code).toBe(0);
      receiver = await startReceiver();
      app = application(database.url);
      failing = await app.outbound.endpoints.create({ url: receiver.url("/fail"), types: ["order.*"] });
      await app.outbound.endpoints.create({ url: receiver.url("/fail"), types: ["order.*"] });
      deadLettered = (await app.outbound.send({ type: "order.failed", data: {} })).id;
      await app.outbound.sendBatch(
        Array.from({ length: 5 }, (_, i) => ({ type: "order.bulk", data: { i } })),
      );
      await drainAll(app);
    }, 120_000);

    afterAll(async () => {
      await app?.close();
      await receiver?.close();
      await database?.drop();
    });

    test("endpoints update changes only what is given and prints header values as ***", async () => {
      const endpoint = await app.outbound.endpoints.create({
        url: receiver.url("/ok"),
        types: ["upd.*"],
        headers: { Authorization: "Bearer s3cr3t", "X-Old": "1" },
      });
      const updated = await run(
        "endpoints",
        "update",
        endpoint.id,
        "--url",
        receiver.url("/ok?v=2"),
        "--allow-private-networks",
        "--description",
        "billing v2",
        "--types",
        "upd.a,upd.b",
        "--header",
        "X-New=t0ps3cr3t",
        "--remove-header",
        "authorization",
        "--rate-limit",
        "2.5",
        "--max-in-flight",
        "3",
      );
      expect(updated.code, updated.stderr).toBe(0);
      expect(updated.stdout).toMatch(/description\s+billing v2\n/);
      // In the order the database keeps them (PostgreSQL's jsonb sorts the keys).
      expect(updated.stdout).toMatch(/headers\s+(X-Old=\*\*\*, X-New|X-New=\*\*\*, X-Old)=\*\*\*\n/);
      expect(updated.stdout).toMatch(/rate limit\s+2.5\/s\n/);
      expect(updated.stdout + updated.stderr).not.toMatch(/s3cr3t|t0ps3cr3t/);
      expect(await app.outbound.endpoints.get(endpoint.id)).toMatchObject({
        url: receiver.url("/ok?v=2"),
        description: "billing v2",
        types: ["upd.a", "upd.b"],
        headers: { "X-Old": "1", "X-New": "t0ps3cr3t" },
        rateLimit: 2.5,
        maxInFlight: 3,
      });

      const reset = await json<Endpoint>(
        "endpoints",
        "update",
        endpoint.id,
        "--rate-limit",
        "default",
        "--description",
        "",
      );
      expect(reset).toMatchObject({ rateLimit: null, maxInFlight: 3, description: null });
      expect(reset.headers).toEqual({ "X-Old": "***", "X-New": "***" });
    });

    test("endpoints update refuses what it cannot do, in the CLI's words", async () => {
      const cases: [string[], number, string][] = [
        [[failing.id], 2, "Say what to change"],
        [[failing.id, "--remove-header", "X-Nope"], 2, "the endpoint sends no such header"],
        [[failing.id, "--rate-limit", "fast"], 2, '--rate-limit must be a number or "default"'],
        [[failing.id, "--rate-limit", "0"], 2, 'or "default" for the app\'s own setting'],
        [[failing.id, "--url", "http://127.0.0.1:9/hook"], 2, "pass --allow-private-networks"],
        [["ep_nope", "--rate-limit", "1"], 3, "list them with `postel endpoints list`"],
      ];
      const runs = await Promise.all(cases.map(([args]) => run("endpoints", "update", ...args)));
      for (const [i, result] of runs.entries()) {
        expect(result.code, `${cases[i]![0].join(" ")}: ${result.stderr}`).toBe(cases[i]![1]);
        expect(result.stderr).toContain(cases[i]![2]);
        expect(result.stderr).not.toMatch(/outbound: \{|endpoints\.list\(\)|outbound\.limits/);
      }
      expect((await app.outbound.endpoints.get(failing.id))?.url).toBe(failing.url);
    });

    test("replay --delivery re-enqueues exactly that delivery; --dry-run counts and changes nothing", async () => {
      const [first, second] = await app.outbound.messages.deliveries(deadLettered);
      expect([first?.status, second?.status]).toEqual(["dead-lettered", "dead-lettered"]);
      const before = await state();
      const dry = await run("replay", "--delivery", first!.id, "--dry-run");
      expect(dry.stdout).toBe("Would replay 1 deliveries (of 1 messages); nothing was changed.\n");
      // A bulk dry run needs no --yes: it writes nothing.
      const bulk = await json("replay", "--endpoint", failing.id, "--since", "1h", "--dry-run");
      expect(bulk).toMatchObject({ dryRun: true, wouldReplay: 6, messages: 6 });
      expect(await state()).toEqual(before);

      const replayed = await json<{ replayed: number; deliveries: { deliveryId: string }[] }>(
        "replay",
        "--delivery",
        first!.id,
      );
      expect(replayed).toMatchObject({ replayed: 1, deliveries: [{ deliveryId: first!.id }] });
      const after = await app.outbound.messages.deliveries(deadLettered);
      expect(after.map((d) => [d.id, d.status])).toEqual([
        [first!.id, "pending"],
        [second!.id, "dead-lettered"],
      ]);
      await drainAll(app);

      const unknown = await run("replay", "--delivery", `${first!.id},dlv_nope`);
      expect(unknown.code).toBe(3);
      expect(unknown.stderr).toMatch(/^postel: DELIVERY_NOT_FOUND: No delivery with id "dlv_nope"/);
      expect(unknown.stderr).toContain("`postel messages show <id>`");
      expect((await app.outbound.messages.deliveries(deadLettered))[0]?.status).toBe("dead-lettered");
      const mixed = await run("replay", "--delivery", first!.id, "--message", deadLettered);
      expect(mixed.code).toBe(2);
    });

    test("endpoints delete asks on a terminal, needs --yes elsewhere; replay refuses its held, then cancelled, delivery", async () => {
      const held = await app.outbound.endpoints.create({ url: receiver.url("/ok"), types: ["hold.*"] });
      await app.outbound.endpoints.disable(held.id);
      const { id } = await app.outbound.send({ type: "hold.me", data: {} });
      await drainAll(app);
      const [delivery] = await app.outbound.messages.deliveries(id);
      expect(delivery?.status).toBe("held");
      const pending = await run("replay", "--delivery", delivery!.id);
      expect(pending.code).toBe(2);
      expect(pending.stderr).toMatch(/^postel: DELIVERY_NOT_FINISHED: .*is still held/);

      const unconfirmed = await run("endpoints", "delete", held.id);
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toContain("add --yes to confirm");
      const declined = await inProcess(["endpoints", "delete", held.id], "n");
      expect(declined.code).toBe(0);
      expect(declined.stderr).toMatch(/^Delete endpoint ep_\S+ \(http:\S+\) and cancel .*\? \[y\/N\] /);
      expect(declined.stderr).toContain("Not deleted");
      expect(await app.outbound.endpoints.get(held.id)).not.toBeNull();

      const deleted = await run("endpoints", "delete", held.id, "--yes");
      expect(deleted.code, deleted.stderr).toBe(0);
      expect(deleted.stdout).toContain(`Deleted ${held.id}: its pending and held deliveries are cancelled`);
      expect(await app.outbound.endpoints.get(held.id)).toBeNull();
      expect((await app.outbound.messages.deliveries(id))[0]?.status).toBe("cancelled");
      const cancelled = await run("replay", "--delivery", delivery!.id);
      expect(cancelled.code).toBe(2);
      expect(cancelled.stderr).toMatch(/^postel: DELIVERY_NOT_REPLAYABLE: /);

      const other = await app.outbound.endpoints.create({
        url: receiver.url("/ok"),
        headers: { "X-Key": "k3y" },
      });
      const confirmed = await inProcess(["endpoints", "delete", other.id, "--json"], "y");
      expect(confirmed.code, confirmed.stderr).toBe(0);
      expect(JSON.parse(confirmed.stdout)).toMatchObject({
        deleted: true,
        endpoint: { headers: { "X-Key": "***" } },
      });
      expect(await app.outbound.endpoints.get(other.id)).toBeNull();
      expect((await run("endpoints", "delete", "ep_nope", "--yes")).code).toBe(3);
    });

    test("prune --dry-run counts the old history and deletes nothing; the prune then deletes that", async () => {
      const past = application(database.url, new ManualClock(Date.now() - 2 * 86_400_000));
      try {
        await past.outbound.endpoints.create({ url: receiver.url("/ok"), types: ["archive.*"] });
        await past.outbound.sendBatch(
          Array.from({ length: 3 }, (_, i) => ({ type: "archive.item", data: { i } })),
        );
        await drainAll(past);
      } finally {
        await past.close();
      }
      const before = await state();
      const dry = await run("prune", "--older-than", "1d", "--dry-run", "--progress", "--batch-size", "2");
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(
        /^Would delete 3 messages \(3 deliveries, 3 attempts\) that finished before 20\d\d-.*nothing was deleted\.\n$/,
      );
      expect(dry.stderr).toContain("counted 3 messages");
      expect(await json("prune", "--older-than", "1d", "--dry-run")).toMatchObject({
        dryRun: true,
        messages: 3,
        deliveries: 3,
        attempts: 3,
        complete: true,
      });
      expect(await state()).toEqual(before);
      expect(await json("prune", "--older-than", "1d", "--yes")).toMatchObject({
        messages: 3,
        deliveries: 3,
      });
    });

    test("each change is recorded in the audit log as --actor from the cli; a dry run or a bad actor records nothing", async () => {
      const entries = async () => (await app.outbound.auditLog.list({ limit: 1000 })).items;
      const endpoint = await app.outbound.endpoints.create({
        url: receiver.url("/fail"),
        types: ["audit.*"],
      });
      await app.outbound.send({ type: "audit.item", data: {} });
      await drainAll(app);
      const before = await entries();

      // Refused before anything changes: exit 2, the endpoint as it was, nothing recorded.
      const refusals = await Promise.all([
        run("endpoints", "disable", endpoint.id, "--actor", ""),
        run("endpoints", "disable", endpoint.id, "--actor", "a".repeat(201)),
        postel(database.url, ["endpoints", "disable", endpoint.id], { POSTEL_ACTOR: "a".repeat(201) }),
        run("replay", "--endpoint", endpoint.id, "--since", "1h", "--yes", "--actor", " "),
      ]);
      expect(
        refusals.map((r) => [r.code, /^postel: USAGE: (--actor|POSTEL_ACTOR) must /.test(r.stderr)]),
      ).toEqual(Array(4).fill([2, true]));
      expect((await app.outbound.endpoints.get(endpoint.id))?.state).toBe("active");
      const dryRuns = await Promise.all([
        run("replay", "--endpoint", endpoint.id, "--since", "1h", "--dry-run", "--actor", "ada"),
        run("prune", "--older-than", "1d", "--dry-run", "--actor", "ada"),
      ]);
      for (const dry of dryRuns) expect(dry.code, dry.stderr).toBe(0);
      expect(await entries()).toEqual(before);

      const replayed = await run(
        "replay",
        "--endpoint",
        endpoint.id,
        "--since",
        "1h",
        "--status",
        "dead-lettered",
        "--yes",
        "--actor",
        "ada@acme.test",
      );
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(replayed.stderr).toBe("");
      const disabled = await run(
        "endpoints",
        "disable",
        endpoint.id,
        "--reason",
        "audit",
        "--actor",
        "ada@acme.test",
      );
      expect(disabled.code, disabled.stderr).toBe(0);
      // POSTEL_ACTOR without --actor; without either, the OS account, marked as such.
      const enabled = await postel(database.url, ["endpoints", "enable", endpoint.id], {
        POSTEL_ACTOR: "deploy-bot",
      });
      expect(enabled.code, enabled.stderr).toBe(0);
      const rotated = await run("endpoints", "rotate-secret", endpoint.id, "--show-secret");
      expect(rotated.code, rotated.stderr).toBe(0);

      const recorded = (await entries()).slice(0, -before.length || undefined);
      expect(recorded).toEqual([
        expect.objectContaining({
          actor: `os:${userInfo().username}@${hostname()}`,
          action: "secret.rotate",
          target: endpoint.id,
          source: "cli",
          detail: { overlap: 86_400_000, secretShown: true },
        }),
        expect.objectContaining({
          actor: "deploy-bot",
          action: "endpoint.enable",
          target: endpoint.id,
          source: "cli",
          detail: { was: "disabled" },
        }),
        expect.objectContaining({
          actor: "ada@acme.test",
          action: "endpoint.disable",
          target: endpoint.id,
          source: "cli",
          detail: { reason: "audit" },
        }),
        {
          id: expect.stringMatching(/^aud_/),
          at: expect.any(Number),
          tenantId: null,
          actor: "ada@acme.test",
          action: "endpoint.replay",
          target: endpoint.id,
          source: "cli",
          detail: { replayed: 1, fresh: false, status: "dead-lettered", since: expect.stringMatching(/Z$/) },
          key: null,
        },
      ]);
      // The secret it printed is not in the log.
      expect(JSON.stringify(recorded)).not.toContain(rotated.stdout.trim().split("\n").at(-1));
    });

    // main() in this process, with a terminal on stdin and stderr that answers `answer`.
    async function inProcess(args: string[], answer: string) {
      const text = { stdout: "", stderr: "" };
      const code = await main(args, {
        stdout: { write: (s: string) => (text.stdout += s) },
        stderr: { isTTY: true, write: (s: string) => (text.stderr += s) },
        stdin: { isTTY: true },
        readLine: async () => answer,
        env: { POSTEL_DATABASE_URL: database.url, NO_COLOR: "1" },
        version: "0.0.0",
        interrupted: new Promise(() => {}),
      });
      return { code, ...text };
    }
  });
}
