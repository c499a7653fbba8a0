import type { AttemptRecord } from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { postel, spawnPostel } from "./support/cli.js";
import { createPostgresDatabase, createSqliteDatabase, type TestDatabase } from "./support/databases.js";
import { application, startReceiver } from "./support/seed.js";

// `tail` beside a drain that makes attempts as fast as this machine can: every attempt is printed
// exactly once, and a filtered tail finds a quiet endpoint's attempts beside a busy one's. The poll
// used to ask for the oldest 1,000 attempts of the last two minutes and print nothing new above that.
const MESSAGES = 2_000;

/** Nothing due, leased, scheduled, held or waiting for fan-out. */
function settled(stats: Awaited<ReturnType<ReturnType<typeof application>["outbound"]["stats"]>>): boolean {
  const { due, inFlight, scheduled, held, unfanned } = stats.backlog;
  return due + inFlight + scheduled + held + unfanned === 0;
}

for (const [name, create] of [
  ["PostgreSQL", createPostgresDatabase],
  ["SQLite", createSqliteDatabase],
] as const) {
  describe(`postel tail beside a running drain (${name})`, () => {
    let database: TestDatabase;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let app: ReturnType<typeof application>;

    beforeAll(async () => {
      database = await create();
      receiver = await startReceiver();
      const migrated = await postel(database.url, ["migrate"]);
      expect(migrated.code, migrated.stderr).toBe(0);
      app = application(database.url);
    });

    // Closing after the drain (the app, its SQLite file beside the tail processes' readers) once took
    // longer than vitest's default 30 s in a CI run under full load, though the test had passed: the
    // hook gets the bound of the test's own waits.
    afterAll(async () => {
      await app?.close();
      await receiver?.close();
      await database?.drop();
    }, 120_000);

    test("prints every attempt once while thousands are made, and a filtered tail finds the quiet endpoint's", async () => {
      const busy = await app.outbound.endpoints.create({ url: receiver.url("/ok"), types: ["order.*"] });
      const quiet = await app.outbound.endpoints.create({ url: receiver.url("/fail"), types: ["invoice.*"] });
      const all = spawnPostel(database.url, ["tail", "--since", "0s", "--json"]);
      const filtered = spawnPostel(database.url, ["tail", "--since", "0s", "--json", "--endpoint", quiet.id]);
      try {
        await all.until((o) => o.stderr.includes("Tailing attempts since"), 60_000);
        await filtered.until((o) => o.stderr.includes("Tailing attempts since"), 60_000);
        await app.start();
        const quietIds: string[] = [];
        const messageIds: string[] = [];
        for (let sent = 0; sent < MESSAGES; sent += 500) {
          const batch = Array.from({ length: 500 }, (_, i) => ({
            type: "order.created",
            data: { i: sent + i },
          }));
          for (const { id } of await app.outbound.sendBatch(batch)) messageIds.push(id);
          quietIds.push((await app.outbound.send({ type: "invoice.failed", data: { sent } })).id);
        }
        messageIds.push(...quietIds);
        // No retries: each message gets exactly one attempt. Wait for storage to hold them all, not for
        // the receiver to count them: on a loaded machine some requests time out before they arrive.
        const expected = MESSAGES + quietIds.length;
        const deadline = Date.now() + 300_000;
        let stats = await app.outbound.stats({ exact: true });
        while (Date.now() < deadline && !(settled(stats) && stats.attempts.total === expected)) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          stats = await app.outbound.stats({ exact: true });
        }
        expect(stats.attempts.total).toBe(expected);
        expect(settled(stats)).toBe(true);
        await app.stop();

        const printed = (stdout: string) =>
          stdout
            .trim()
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => JSON.parse(line) as AttemptRecord);
        await all.until((o) => printed(o.stdout).length >= expected, 60_000);
        await filtered.until((o) => printed(o.stdout).length >= quietIds.length, 60_000);
        // A poll or two more: nothing is printed twice.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        const seen = printed(all.output.stdout);
        expect(seen).toHaveLength(expected);
        expect(new Set(seen.map((a) => a.id)).size).toBe(expected);
        const quietSeen = printed(filtered.output.stdout);
        expect(quietSeen.map((a) => a.messageId).sort()).toEqual([...quietIds].sort());
        expect(quietSeen.every((a) => a.endpointId === quiet.id)).toBe(true);
        expect(seen.filter((a) => a.endpointId === busy.id)).toHaveLength(MESSAGES);
        // What was printed is what each message's own trail holds, read another way.
        const recorded: string[] = [];
        for (const id of messageIds)
          for (const a of await app.outbound.messages.attempts(id)) recorded.push(a.id);
        expect(seen.map((a) => a.id).sort()).toEqual(recorded.sort());
      } finally {
        all.child.kill("SIGKILL");
        filtered.child.kill("SIGKILL");
      }
    }, 420_000);
  });
}
