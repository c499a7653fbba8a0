import {
  type Endpoint,
  type HeldKey,
  InMemoryStorage,
  LinearBackoff,
  type Page,
  Postel,
  type PostelInstance,
  type Storage,
} from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { OpenDatabase } from "../src/database.js";
import { main } from "../src/main.js";
import { formatTime } from "../src/time.js";
import { drainAll, startReceiver } from "./support/seed.js";

// `main` runs in this process, on a Postel over InMemoryStorage, instead of the built binary on a
// database file: the commands are the same on every storage with the ordering capability.
describe("postel keys, on a storage with ordered delivery", () => {
  const storage = InMemoryStorage();
  let app: PostelInstance<Storage<unknown>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let holding: Endpoint;
  let other: Endpoint;
  let head: HeldKey;

  /** Runs `postel <args>` (POSTEL_ACTOR ada@acme.test); `answer` is typed at a terminal prompt. */
  async function run(args: string[], answer?: string) {
    const text = { stdout: "", stderr: "" };
    const terminal = answer !== undefined;
    const code = await main(args, {
      stdout: { write: (s: string) => (text.stdout += s) },
      stderr: { write: (s: string) => (text.stderr += s), isTTY: terminal },
      stdin: { isTTY: terminal },
      readLine: async () => answer ?? null,
      env: { POSTEL_DATABASE_URL: "postgres://unused@127.0.0.1/memory", POSTEL_ACTOR: "ada@acme.test" },
      version: "0.0.0",
      interrupted: new Promise(() => {}),
      openDatabase: async (target) =>
        ({
          postel: app,
          storage,
          target,
          // The Postel outlives each command: the test closes it.
          close: async () => {},
        }) as unknown as OpenDatabase,
    });
    return { code, ...text };
  }
  const json = async <T>(args: string[]): Promise<T> => {
    const result = await run([...args, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as T;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    app = Postel({
      outbound: {
        storage,
        retryPolicy: LinearBackoff({ maxAttempts: 0, step: "1s" }),
        circuitBreaker: false,
        autoDisable: false,
        http: { allowPrivateNetworks: true, timeout: "5s" },
        credentials: { encryption: "off" },
      },
    }) as unknown as PostelInstance<Storage<unknown>>;
    // The receiver refuses every subscription for good until it is told otherwise.
    receiver.answer("/subscriptions", 400, "unknown subscription");
    holding = await app.outbound.endpoints.create({
      url: receiver.url("/subscriptions"),
      types: ["sub.*"],
      onKeyFailure: "hold",
    });
    other = await app.outbound.endpoints.create({ url: receiver.url("/ok"), types: ["order.*"] });
    for (let i = 0; i < 3; i++)
      await app.outbound.send({ type: "sub.updated", data: { i }, orderingKey: "sub_1" });
    await app.outbound.send({ type: "sub.updated", data: { i: 0 }, orderingKey: "sub_2" });
    await drainAll(app);
    [head] = (await app.outbound.orderingKeys.held({ endpointId: holding.id })).items as [HeldKey];
  });

  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  test("keys held prints each held key: its head, status, how many wait, since when and why", async () => {
    expect(head).toMatchObject({ orderingKey: "sub_1", status: "failed", waiting: 2 });
    const listed = await run(["keys", "held"]);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, first, second, ...rest] = listed.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ENDPOINT\s+KEY\s+HEAD\s+STATUS\s+WAITING\s+HELD SINCE\s+LAST ERROR$/);
    expect(first!.split(/\s{2,}/)).toEqual([
      holding.id,
      "sub_1",
      head.deliveryId,
      "failed",
      "2",
      formatTime(head.heldAt),
      "HTTP 400",
    ]);
    expect(second).toMatch(new RegExp(`^${holding.id}\\s+sub_2\\s+dlv_\\S+\\s+failed\\s+0\\s`));
    expect(rest).toEqual([]);
    expect(listed.stderr).toBe("");
  });

  test("keys held --json is the page of orderingKeys.held(); --limit pages with a hint; --endpoint filters", async () => {
    expect(await json(["keys", "held"])).toEqual(await app.outbound.orderingKeys.held());
    const first = await json<Page<HeldKey>>(["keys", "held", "--limit", "1"]);
    expect(first.items.map((k) => k.orderingKey)).toEqual(["sub_1"]);
    const limited = await run(["keys", "held", "--limit", "1"]);
    expect(limited.stderr).toBe(`More: run the same command with --cursor ${first.nextCursor}\n`);
    const second = await json<Page<HeldKey>>(["keys", "held", "--limit", "1", "--cursor", first.nextCursor!]);
    expect(second).toEqual({ items: [expect.objectContaining({ orderingKey: "sub_2" })], nextCursor: null });
    const none = await run(["keys", "held", "--endpoint", other.id]);
    expect([none.code, none.stdout, none.stderr]).toEqual([0, "", "No held keys.\n"]);
  });

  test("stats counts the deliveries waiting behind their key and the held keys", async () => {
    const shown = await run(["stats"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/\nordering\s+2 waiting, 2 held keys \(postel keys held\)\n/);
    const data = await json<{ ordering: { waiting: number; heldKeys: HeldKey[] } }>(["stats"]);
    expect(data.ordering).toEqual({ waiting: 2, heldKeys: expect.any(Array) });
  });

  test("check --max-held-keys fails (exit 5) while more keys than that are held", async () => {
    const failing = await run(["check", "--max-held-keys", "1"]);
    expect(failing.code).toBe(5);
    expect(failing.stdout).toMatch(/held-keys\s+2\s+1\s+FAIL/);
    const data = await run(["check", "--max-held-keys", "2", "--json"]);
    expect(data.code, data.stderr).toBe(0);
    expect(JSON.parse(data.stdout)).toEqual({
      ok: true,
      checks: [{ name: "held-keys", value: 2, atLeast: false, threshold: 2, ok: true }],
    });
  });

  test("keys skip of a key that is not held exits 3 with KEY_NOT_HELD, asked or not", async () => {
    for (const args of [
      ["keys", "skip", holding.id, "sub_9", "--yes"],
      ["keys", "skip", holding.id, "sub_9"],
      ["keys", "skip", other.id, "sub_1", "--yes"],
    ]) {
      const refused = await run(args);
      expect(refused.code, args.join(" ")).toBe(3);
      expect(refused.stderr).toMatch(/^postel: KEY_NOT_HELD: Ordering key "sub_\d" is not held on endpoint /);
      expect(refused.stderr).toContain("List the held keys with `postel keys held`.");
    }
    const asJson = await run(["keys", "skip", holding.id, "sub_9", "--yes", "--json"]);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: "KEY_NOT_HELD", exitCode: 3 } });
  });

  test("keys skip asks on a terminal, needs --yes elsewhere, and a no skips nothing", async () => {
    const unasked = await run(["keys", "skip", holding.id, "sub_1"]);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain("add --yes to confirm");
    const declined = await run(["keys", "skip", holding.id, "sub_1"], "n");
    expect(declined.code).toBe(0);
    expect(declined.stderr).toContain(
      `Skip key "sub_1" on ${holding.id}? Its head ${head.deliveryId} (failed)`,
    );
    expect(declined.stderr).toContain('Not skipped: "sub_1" is still held.');
    expect((await app.outbound.orderingKeys.held({ endpointId: holding.id })).items).toHaveLength(2);
  });

  test("keys skip releases the key: its waiting messages are delivered in order, and the audit log says who", async () => {
    receiver.answer("/subscriptions", 200, "ok");
    const skipped = await json(["keys", "skip", holding.id, "sub_1", "--yes"]);
    expect(skipped).toEqual({
      endpointId: holding.id,
      orderingKey: "sub_1",
      skippedDeliveryId: head.deliveryId,
    });
    await drainAll(app);
    const bodies = receiver.requests
      .filter((r) => r.path === "/subscriptions")
      .map((r) => JSON.parse(r.body.toString()).data.i);
    // The two refused heads, then sub_1's waiting messages in send order; the head stays failed.
    expect(bodies).toEqual([0, 0, 1, 2]);
    const held = (await app.outbound.orderingKeys.held()).items.map((k) => k.orderingKey);
    expect(held).toEqual(["sub_2"]);
    const [entry] = (await app.outbound.auditLog.list({ action: "ordering-key.skip" })).items;
    expect(entry).toMatchObject({
      actor: "ada@acme.test",
      source: "cli",
      target: holding.id,
      detail: { orderingKey: "sub_1", skippedDeliveryId: head.deliveryId },
    });
    const text = await run(["keys", "skip", holding.id, "sub_2", "--yes"]);
    expect(text.stdout).toMatch(
      /^Skipped "sub_2" on ep_\S+: its next message goes now; the head dlv_\S+ stays as it was\.\n$/,
    );
    expect(text.stderr).toMatch(/^Replay the head on its own with: postel replay --delivery dlv_/);
  });

  test("endpoints create and update take --on-key-failure skip or hold, and show it", async () => {
    const created = await run([
      "endpoints",
      "create",
      "--url",
      "https://hooks.example.com/ordered",
      "--on-key-failure",
      "hold",
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/\non key failure\s+hold\n/);
    const id = /^id\s+(\S+)/.exec(created.stdout)![1]!;
    expect((await app.outbound.endpoints.get(id))?.onKeyFailure).toBe("hold");
    const updated = await json<Endpoint>(["endpoints", "update", id, "--on-key-failure", "skip"]);
    expect(updated.onKeyFailure).toBe("skip");
    const [entry] = (await app.outbound.auditLog.list({ action: "endpoint.update" })).items;
    expect(entry?.detail).toMatchObject({ fields: "onKeyFailure" });
    const bad = await run(["endpoints", "update", id, "--on-key-failure", "retry"]);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      'postel: USAGE: --on-key-failure must be skip or hold; got "retry".\n',
    ]);
  });
});
