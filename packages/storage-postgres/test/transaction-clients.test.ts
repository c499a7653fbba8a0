import { Postel } from "@postel/core";
import { PrismaPg } from "@prisma/adapter-pg";
import { sql as drizzleSql } from "drizzle-orm";
import { drizzle as drizzleNodePostgres } from "drizzle-orm/node-postgres";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import { Kysely, PostgresDialect, sql as kyselySql } from "kysely";
import pg from "pg";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { migrate, PostgresStorage, type PostgresTransaction } from "../src/index.js";
import { generatePrismaClient } from "./fixtures/prisma/generate.mjs";
import { createTestDatabase, type TestDatabase } from "./support/database.js";
import { PGBOUNCER_BINARY, type PgBouncer, startPgBouncer } from "./support/pgbouncer.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";

// `send(event, { tx })` joins the app's transaction whatever client the app uses: a rolled-back
// transaction leaves no message (never delivered), a committed one is delivered exactly once, and
// workers see nothing before the commit. Each client writes an order beside the sends, as an app would.

class Abort extends Error {}

/** One client an app may run its transaction on. */
interface Client {
  name: string;
  /** Runs `work` in a transaction of this client, with an order insert first; commits unless it throws. */
  transaction(work: (tx: PostgresTransaction) => Promise<void>, orderId: string): Promise<void>;
}

// Every client directly and through PgBouncer in transaction-pooling mode (.ci/run installs it; a
// machine without it runs the direct section only, and test/pgbouncer.test.ts says it skipped).
const withPgBouncer = PGBOUNCER_BINARY !== undefined;

let database: TestDatabase;
/** Direct to the database: for setup and for checking what was written. */
let sql: Sql;
let receiver: TestReceiver;
let bouncer: PgBouncer | undefined;
/** Postel on the database directly, for the tests outside the per-client table. */
let plain: ReturnType<typeof Postel>;
const plainEvent = (n: number) => ({ type: "plain.order.created", data: { n } });
const closing: (() => Promise<void>)[] = [];

beforeAll(async () => {
  generatePrismaClient();
  database = await createTestDatabase();
  sql = database.connect();
  await migrate(sql);
  await sql`CREATE TABLE orders (id text PRIMARY KEY, total int NOT NULL)`;
  receiver = await startReceiver();
  if (withPgBouncer) bouncer = await startPgBouncer();
  plain = Postel({
    outbound: { storage: PostgresStorage({ url: database.url }), http: { allowPrivateNetworks: true } },
  });
  closing.push(() => plain.close());
}, 60_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await receiver?.close();
  await bouncer?.stop();
  await database?.drop();
});

/** Postel and every client, connected to `url` (the database, or PgBouncer in front of it). */
async function connect(
  url: string,
  pooled: boolean,
): Promise<{ postel: ReturnType<typeof Postel>; clients: Client[] }> {
  const postel = Postel({
    outbound: {
      // Behind a transaction pooler: no named prepared statements, LISTEN on the server itself.
      storage: PostgresStorage({ url }, pooled ? { prepare: false, listen: { url: database.url } } : {}),
      http: { allowPrivateNetworks: true },
    },
  });
  const appSql = postgres(url, { prepare: !pooled, max: 4, onnotice: () => {} });
  const pgPool = new pg.Pool({ connectionString: url, max: 2 });
  const { PrismaClient } = await import("./fixtures/prisma/generated/client.js");
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
  const kyselyPool = new pg.Pool({ connectionString: url, max: 2 });
  const kysely = new Kysely<{ orders: { id: string; total: number } }>({
    dialect: new PostgresDialect({ pool: kyselyPool }),
  });
  closing.push(
    () => postel.close(),
    () => appSql.end(),
    () => pgPool.end(),
    () => prisma.$disconnect(),
    () => kysely.destroy(),
  );
  const postgresJsDrizzle = drizzlePostgresJs(appSql);
  const nodePostgresDrizzle = drizzleNodePostgres(pgPool);
  const order = (id: string) => drizzleSql`INSERT INTO orders (id, total) VALUES (${id}, 4200)`;

  const clients: Client[] = [
    {
      name: "postgres.js sql.begin",
      transaction: async (work, id) => {
        await appSql.begin(async (tx) => {
          await tx`INSERT INTO orders (id, total) VALUES (${id}, 4200)`;
          await work(tx);
        });
      },
    },
    {
      name: "drizzle on postgres.js",
      transaction: (work, id) =>
        postgresJsDrizzle.transaction(async (tx) => {
          await tx.execute(order(id));
          await work(tx);
        }),
    },
    {
      name: "drizzle on node-postgres",
      transaction: (work, id) =>
        nodePostgresDrizzle.transaction(async (tx) => {
          await tx.execute(order(id));
          await work(tx);
        }),
    },
    {
      name: "node-postgres PoolClient inside BEGIN",
      transaction: async (work, id) => {
        const client = await pgPool.connect();
        try {
          await client.query("BEGIN");
          await client.query("INSERT INTO orders (id, total) VALUES ($1, 4200)", [id]);
          await work(client);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        } finally {
          client.release();
        }
      },
    },
    {
      name: "Prisma interactive transaction",
      transaction: async (work, id) => {
        await prisma.$transaction(async (tx) => {
          await tx.order.create({ data: { id, total: 4200 } });
          await work(tx);
        });
      },
    },
    {
      name: "Kysely transaction",
      transaction: (work, id) =>
        kysely.transaction().execute(async (trx) => {
          await trx.insertInto("orders").values({ id, total: 4200 }).execute();
          await work(trx);
        }),
    },
  ];
  await postel.outbound.endpoints.create({ url: receiver.url, types: [`${pooled ? "pooled" : "direct"}.*`] });
  return { postel, clients };
}

const CLIENTS = [
  "postgres.js sql.begin",
  "drizzle on postgres.js",
  "drizzle on node-postgres",
  "node-postgres PoolClient inside BEGIN",
  "Prisma interactive transaction",
  "Kysely transaction",
];
const orderExists = async (id: string) => (await sql`SELECT 1 FROM orders WHERE id = ${id}`).length === 1;

describe.each([
  { how: "directly", pooled: false },
  ...(withPgBouncer ? [{ how: "through PgBouncer (pool_mode = transaction)", pooled: true }] : []),
])("$how", ({ pooled }) => {
  let postel: ReturnType<typeof Postel>;
  let clients: Client[];
  beforeAll(async () => {
    ({ postel, clients } = await connect(pooled ? bouncer!.through(database.url) : database.url, pooled));
  }, 30_000);
  // Each endpoint takes only its own section's types: the two sections' drains never see each other's.
  const event = (n: number) => ({ type: `${pooled ? "pooled" : "direct"}.order.created`, data: { n } });

  describe.each(CLIENTS)("send(event, { tx }) with a %s", (name) => {
    const client = () => clients.find((c) => c.name === name)!;
    const tag = `${name}_${pooled ? "pooled" : "direct"}`;

    test("a transaction that rolls back leaves no message, and nothing is ever delivered", async () => {
      const orderId = `ord_rollback_${tag}`;
      const ids: string[] = [];
      await expect(
        client().transaction(async (tx) => {
          ids.push((await postel.outbound.send(event(1), { tx })).id);
          ids.push(...(await postel.outbound.sendBatch([event(2), event(3)], { tx })).map((r) => r.id));
          throw new Abort("the business write failed");
        }, orderId),
      ).rejects.toBeInstanceOf(Abort);
      expect(await orderExists(orderId)).toBe(false);
      for (const id of ids) expect(await postel.outbound.messages.get(id)).toBeNull();
      await postel.drain();
      for (const id of ids) expect(receiver.delivered.has(id)).toBe(false);
    });

    test("a transaction that commits is delivered exactly once, and workers see nothing before the commit", async () => {
      const orderId = `ord_commit_${tag}`;
      const ids: string[] = [];
      await client().transaction(async (tx) => {
        ids.push((await postel.outbound.send(event(1), { tx })).id);
        ids.push(...(await postel.outbound.sendBatch([event(2), event(3)], { tx })).map((r) => r.id));
        // Workers on other connections: the messages are not theirs to see yet.
        await postel.drain();
        for (const id of ids) {
          expect(receiver.delivered.has(id)).toBe(false);
          expect(await postel.outbound.messages.get(id)).toBeNull();
        }
      }, orderId);
      expect(await orderExists(orderId)).toBe(true);
      await postel.drain();
      expect(ids.map((id) => receiver.delivered.get(id))).toEqual([1, 1, 1]);
    });

    test("idempotency keys hold across transactions: a second send with the same key returns the first message", async () => {
      const key = `key_${tag}`;
      const sends: { id: string; reused: boolean }[] = [];
      for (const orderId of [`ord_key1_${tag}`, `ord_key2_${tag}`]) {
        await client().transaction(async (tx) => {
          sends.push(await postel.outbound.send({ ...event(5), idempotencyKey: key }, { tx }));
          sends.push(
            ...(await postel.outbound.sendBatch([{ ...event(6), idempotencyKey: `${key}_batch` }], { tx })),
          );
        }, orderId);
      }
      expect(sends.map((s) => s.reused)).toEqual([false, false, true, true]);
      expect(sends[2]!.id).toBe(sends[0]!.id);
      expect(sends[3]!.id).toBe(sends[1]!.id);
    });
  });
});

describe("send(event, { tx }) with something it cannot join", () => {
  const refused: [string, () => unknown][] = [
    ["a postgres.js pool", () => sql],
    ["a drizzle database", () => drizzlePostgresJs(sql)],
    ["a node-postgres Pool", () => new pg.Pool({ connectionString: database.url })],
    ["a Kysely instance", () => new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool() }) })],
    ["an object of unknown kind", () => ({ begin() {} })],
  ];
  test.each(refused)(
    "%s is refused with INVALID_TRANSACTION naming what it takes, and nothing is written",
    async (_, tx) => {
      const before = await sql`SELECT count(*)::int AS n FROM postel.messages`;
      const error = await plain.outbound
        .send(plainEvent(9), { tx: tx() as PostgresTransaction })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: "INVALID_TRANSACTION" });
      expect((error as Error).message).toMatch(/not a transaction Postel can join/);
      expect((error as Error).message).toMatch(/node-postgres client after BEGIN.*Prisma.*Kysely/);
      expect(await sql`SELECT count(*)::int AS n FROM postel.messages`).toEqual(before);
    },
  );

  test("a PrismaClient itself is refused: its queries would run outside any transaction", async () => {
    const { PrismaClient } = await import("./fixtures/prisma/generated/client.js");
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
    try {
      await expect(plain.outbound.send(plainEvent(9), { tx: prisma })).rejects.toMatchObject({
        code: "INVALID_TRANSACTION",
        message: expect.stringMatching(/PrismaClient.*prisma\.\$transaction/),
      });
    } finally {
      await prisma.$disconnect();
    }
  });
});

// Kept apart from the table above: Kysely's `sql` tag is what apps use for raw SQL in a transaction,
// and results come back through Kysely's executor, plugins included.
test("a Kysely transaction's own queries and Postel's share the transaction", async () => {
  const kysely = new Kysely<{ orders: { id: string; total: number } }>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }),
  });
  try {
    const id = await kysely.transaction().execute(async (trx) => {
      const { id } = await plain.outbound.send(plainEvent(7), { tx: trx });
      const { rows } = await kyselySql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM postel.messages WHERE id = ${id}`.execute(trx);
      expect(rows[0]?.n).toBe(1);
      return id;
    });
    expect(await plain.outbound.messages.get(id)).toMatchObject({ id, status: "pending" });
  } finally {
    await kysely.destroy();
  }
});
