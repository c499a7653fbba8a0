import {
  type Endpoint,
  LinearBackoff,
  ManualClock,
  type PostelInstance,
  STATS_COUNT_CAP,
  type Storage,
} from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type CliRun, postel } from "./cli.js";
import type { TestDatabase } from "./databases.js";
import { application, drainAll, startReceiver } from "./seed.js";

const ALL = "--max-oldest-due 5m --max-due 0 --max-dead-letters 0 --max-failed 0 --max-disabled 0".split(" ");

/**
 * `postel check` against a real database a real application writes to, on one of its own so the
 * counts are the suite's: healthy first, then one kind of trouble per test, each seen by its own
 * threshold (the tests run in order, and each leaves its trouble behind).
 */
export function describeCheckCommand(name: string, createDatabase: () => Promise<TestDatabase>): void {
  describe(`postel check on ${name}`, () => {
    let database: TestDatabase;
    let app: PostelInstance<Storage<unknown>>;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let healthy: Endpoint;
    const run = (...args: string[]) => postel(database.url, ["check", ...args]);
    // Fails with what postel printed when the exit status is not the one expected.
    const expectExit = (result: CliRun, code: number) =>
      expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(code);

    beforeAll(async () => {
      database = await createDatabase();
      expect((await postel(database.url, ["migrate"])).code).toBe(0);
      receiver = await startReceiver();
      app = application(database.url);
      healthy = await app.outbound.endpoints.create({ url: receiver.url("/ok"), types: ["order.*"] });
      await app.outbound.send({ type: "order.created", data: { id: 1 } });
      await drainAll(app);
    }, 120_000);

    afterAll(async () => {
      await app?.close();
      await receiver?.close();
      await database?.drop();
    });

    test("a healthy outbox passes every check: exit 0, one OK line each", async () => {
      const result = await run(...ALL);
      expectExit(result, 0);
      expect(result.stdout).toBe(
        [
          "CHECK         VALUE     MAX  RESULT",
          "oldest-due    none due  5m   OK",
          "due           0         0    OK",
          "dead-letters  0         0    OK",
          "failed        0         0    OK",
          "disabled      0         0    OK",
          "",
        ].join("\n"),
      );
      expect(result.stderr).toBe("");
    });

    test("--json prints { ok, checks } with each value, threshold and verdict", async () => {
      const result = await run(...ALL, "--json");
      expectExit(result, 0);
      expect(JSON.parse(result.stdout)).toEqual({
        ok: true,
        checks: [
          { name: "oldest-due", value: null, atLeast: false, threshold: 300_000, ok: true },
          { name: "due", value: 0, atLeast: false, threshold: 0, ok: true },
          { name: "dead-letters", value: 0, atLeast: false, threshold: 0, ok: true },
          { name: "failed", value: 0, atLeast: false, threshold: 0, ok: true },
          { name: "disabled", value: 0, atLeast: false, threshold: 0, ok: true },
        ],
      });
    });

    test("a dead letter over --max-dead-letters exits 5 with a FAIL line; at the threshold it passes", async () => {
      await app.outbound.endpoints.create({ url: receiver.url("/fail"), types: ["dead.*"] });
      await app.outbound.send({ type: "dead.letter", data: {} });
      await drainAll(app);
      const failed = await run("--max-dead-letters", "0", "--max-failed", "0");
      expectExit(failed, 5);
      expect(failed.stdout).toMatch(/^dead-letters {2}1 +0 +FAIL$/m);
      expect(failed.stdout).toMatch(/^failed {8}0 +0 +OK$/m);
      expect(failed.stderr).toBe("postel: CHECK_FAILED: 1 of 2 checks failed: dead-letters.\n");
      expectExit(await run("--max-dead-letters", "1"), 0);
    });

    test("a permanent failure (HTTP 400) over --max-failed exits 5", async () => {
      await app.outbound.endpoints.create({ url: receiver.url("/bad"), types: ["gone.*"] });
      await app.outbound.send({ type: "gone.away", data: {} });
      await drainAll(app);
      const failed = await run("--max-failed", "0");
      expectExit(failed, 5);
      expect(failed.stdout).toMatch(/^failed +1 +0 +FAIL$/m);
      expectExit(await run("--max-failed", "1"), 0);
    });

    test("a delivery due for longer than --max-oldest-due exits 5, and counts against --max-due", async () => {
      // An application two hours behind: its retry, a second after the failed attempt, has been due
      // for two hours by the real clock; the application never catches up, so it stays due.
      const past = application(database.url, new ManualClock(Date.now() - 2 * 3_600_000));
      try {
        await past.outbound.endpoints.create({
          url: receiver.url("/fail"),
          types: ["late.*"],
          retryPolicy: LinearBackoff({ maxAttempts: 3, step: "1s" }),
        });
        await past.outbound.send({ type: "late.arrival", data: {} });
        await drainAll(past);
      } finally {
        await past.close();
      }
      const late = await run("--max-oldest-due", "1h", "--max-due", "0", "--json");
      expectExit(late, 5);
      const { ok, checks } = JSON.parse(late.stdout) as { ok: boolean; checks: { value: number }[] };
      expect(ok).toBe(false);
      expect(checks[0]).toMatchObject({ name: "oldest-due", threshold: 3_600_000, ok: false });
      expect(checks[0]!.value).toBeGreaterThan(2 * 3_600_000 - 60_000);
      expect(checks[0]!.value).toBeLessThan(2 * 3_600_000 + 60_000);
      expect(checks[1]).toEqual({ name: "due", value: 1, atLeast: false, threshold: 0, ok: false });
      expect(JSON.parse(late.stderr)).toEqual({
        error: { code: "CHECK_FAILED", message: "2 of 2 checks failed: oldest-due, due.", exitCode: 5 },
      });
      const human = await run("--max-oldest-due", "1h");
      expect(human.stdout).toMatch(/^oldest-due {2}(1h 59m|2h) +1h +FAIL$/m);
      expectExit(await run("--max-oldest-due", "3h", "--max-due", "1"), 0);
    });

    test("a disabled endpoint over --max-disabled exits 5", async () => {
      await app.outbound.endpoints.disable(healthy.id, "maintenance");
      const failed = await run("--max-disabled", "0");
      expectExit(failed, 5);
      expect(failed.stdout).toMatch(/^disabled +1 +0 +FAIL$/m);
      expectExit(await run("--max-disabled", "1"), 0);
    });

    test('a count that stopped at the cap shows as ">= n" and fails a lower threshold; exact counts decide a higher one', async () => {
      // Nothing listens on port 1: each delivery fails at once and, without retries, dead-letters.
      await app.outbound.endpoints.create({ url: "http://127.0.0.1:1/", types: ["flood.*"] });
      await app.outbound.sendBatch(
        Array.from({ length: STATS_COUNT_CAP }, (_, i) => ({ type: "flood.item", data: { i } })),
      );
      await drainAll(app);
      // 1 dead letter from earlier, and the endpoint's count stopped at the cap.
      const capped = await run("--max-dead-letters", "10");
      expectExit(capped, 5);
      expect(capped.stdout).toMatch(/^dead-letters {2}>= 1001 +10 +FAIL$/m);
      const exact = await run("--max-dead-letters", "5000", "--json");
      expectExit(exact, 0);
      expect(JSON.parse(exact.stdout).checks).toEqual([
        { name: "dead-letters", value: STATS_COUNT_CAP + 1, atLeast: false, threshold: 5000, ok: true },
      ]);
      // postel stats marks the same counts, overall and for the endpoint that stopped at the cap.
      const stats = await postel(database.url, ["stats"]);
      expect(stats.stdout).toMatch(/^dead letters +>= 1001$/m);
      expect(stats.stdout).toMatch(/ +>= 1000 +0 +\d+ +100\.0%$/m);
      expect(stats.stderr).toBe('Counts shown as ">= n" stopped at 1000; --exact counts every row.\n');
      expect((await postel(database.url, ["stats", "--exact"])).stdout).toMatch(/^dead letters +1001$/m);
    }, 120_000);
  });
}
