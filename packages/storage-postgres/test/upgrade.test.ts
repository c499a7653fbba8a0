import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Postel } from "@postel/core";
import { ManualClock } from "@postel/core/testing";
import { afterEach, expect, test } from "vitest";
import { migrate, PostgresStorage } from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";

// A database holding a working outbox (made by the real engine: test/fixtures/upgrade/generate.mjs)
// at the schema of an earlier migration is upgraded by migrate() and keeps working from the user's
// side: every row is still read, the trail is intact, pending work is delivered and replay works.
const SHIPPED: string[] = JSON.parse(
  readFileSync(new URL("../migrations/meta/_journal.json", import.meta.url), "utf8"),
).entries.map((entry: { tag: string }) => entry.tag);
const FIXTURES = new URL("./fixtures/upgrade/", import.meta.url);
// The newest fixture: the schema the latest migrations upgrade from (the same as the newest
// migration until a new one is added; then the fixture proves that migration against real data).
const FROM = readdirSync(FIXTURES)
  .filter((file) => file.endsWith(".sql"))
  .map((file) => file.slice(0, -".sql".length))
  .filter((name) => SHIPPED.includes(name))
  .sort()
  .at(-1)!;

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

test(`a database holding a working outbox at ${FROM} upgrades and keeps working`, async () => {
  expect(FROM).toBeDefined();
  database = await createTestDatabase();
  const sql = database.connect({ onnotice: () => {} });
  // What an older version's migrate() left behind: the migrations up to FROM, recorded; then its rows.
  await sql`CREATE SCHEMA postel`;
  await sql`CREATE TABLE postel.migrations (name text PRIMARY KEY, hash text NOT NULL, applied_at bigint NOT NULL)`;
  for (const name of SHIPPED.slice(0, SHIPPED.indexOf(FROM) + 1)) {
    const text = readFileSync(new URL(`../migrations/${name}.sql`, import.meta.url), "utf8");
    await sql.unsafe(text);
    const hash = createHash("sha256").update(text).digest("hex");
    await sql`INSERT INTO postel.migrations (name, hash, applied_at) VALUES (${name}, ${hash}, 0)`;
  }
  await sql.unsafe(readFileSync(new URL(`${FROM}.sql`, FIXTURES), "utf8"));
  const count = async () =>
    Object.fromEntries(
      await Promise.all(
        [
          "messages",
          "deliveries",
          "attempts",
          // Since 0007 a delivery's first attempt is kept in its row: every attempt is in this view.
          "all_attempts",
          "endpoints",
          "endpoint_secrets",
          "endpoint_health",
          "received",
        ].map(async (table) => [
          table,
          Number((await sql.unsafe(`SELECT count(*) FROM postel.${table}`))[0]!["count"]),
        ]),
      ),
    );
  const before = await count();

  await migrate(sql);
  expect((await sql`SELECT name FROM postel.migrations ORDER BY name`).map((row) => row["name"])).toEqual(
    SHIPPED,
  );
  expect(await count()).toEqual(before);

  // The user's side, on a clock just after the fixture was written (its ttl and leases stay valid).
  const [newest] = await sql<{ last: string }[]>`SELECT max(created_at) AS last FROM postel.messages`;
  const clock = new ManualClock(Number(newest!.last) + 1_000);
  const received: string[] = [];
  const server = createServer((req, res) => {
    req.resume().on("end", () => {
      received.push(String(req.headers["webhook-id"]));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const postel = Postel({
    clock,
    outbound: { storage: PostgresStorage({ sql }, { migrate: false }), http: { allowPrivateNetworks: true } },
  });
  try {
    const { endpoints, messages } = postel.outbound;
    const all = (await endpoints.list()).items;
    expect(all).toHaveLength(before["endpoints"]);
    for (const endpoint of all) {
      expect(await endpoints.secret(endpoint.id)).toMatch(/^whsec_/);
      await endpoints.update(endpoint.id, { url: `${base}/hook` });
    }
    expect(all.find((endpoint) => endpoint.maxInFlight === 2)).toMatchObject({ rateLimit: 1000 });

    // Every delivered message still has its trail; the dead-lettered ones too.
    const rows = await sql<
      { id: string; status: string }[]
    >`SELECT id, status FROM postel.messages ORDER BY id`;
    let attempts = 0;
    for (const { id } of rows) {
      expect(await messages.get(id)).toMatchObject({ id });
      attempts += (await messages.attempts(id)).length;
    }
    expect(attempts).toBe(before["all_attempts"]);
    const statuses = new Set(rows.map((row) => row.status));
    expect(statuses).toContain("pending");
    expect(statuses).toContain("dead-lettered");

    // Pending work is delivered after the upgrade, and a dead-lettered message can be replayed.
    const pending = rows.filter((row) => row.status === "pending").map((row) => row.id);
    await postel.drain();
    for (const id of pending) expect(received).toContain(id);
    const dead = rows.find((row) => row.status === "dead-lettered")!;
    await postel.outbound.replay({ messageId: dead.id });
    await postel.drain();
    expect(received).toContain(dead.id);
    expect((await messages.attempts(dead.id)).at(-1)).toMatchObject({ statusCode: 200 });
  } finally {
    await postel.close();
    server.close();
  }
}, 60_000);
