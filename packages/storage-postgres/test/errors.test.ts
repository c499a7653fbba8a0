import { EventEmitter } from "node:events";
import { createServer } from "node:net";
import { ConfigurationError, isPostelError, Postel, type PostelError } from "@postel/core";
import { generateSecret } from "@postel/signing";
import postgres from "postgres";
import { afterEach, describe, expect, test } from "vitest";
import { migrate, PostgresDedupStore, PostgresStorage, type PostgresConnection } from "../src/index.js";
import { createTestDatabase, migratedDatabase, SERVER_URL } from "./support/database.js";
import { findSecret } from "@postel/core/testing";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (reason: unknown) => reason,
  );
}

async function rejection(promise: Promise<unknown>): Promise<PostelError> {
  const error = await failure(promise);
  if (!isPostelError(error)) throw error;
  return error;
}

/** Shaped like a node-postgres `pg.Pool` (an EventEmitter with query/connect/end): pg is not installed here. */
function nodePostgresPool(): object {
  return Object.assign(new EventEmitter(), {
    totalCount: 0,
    idleCount: 0,
    waitingCount: 0,
    query: async () => ({ rows: [] }),
    connect: async () => ({}),
    end: async () => {},
  });
}

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("constructor misuse is an INVALID_CONFIGURATION naming the option to pass", () => {
  const cases: [string, unknown, string, RegExp][] = [
    ["nothing to connect with", {}, "", /one of `url`.*`sql`.*`db`/],
    ["a connection string", "postgres://app:hunter2@db/app", "", /goes in `url`.*PostgresStorage\(\{ url/],
    ["a url that is undefined", { url: undefined }, "url", /got undefined \(is the environment variable/],
    [
      "a url that is not a postgres:// URL",
      { url: "app:hunter2@db:5432" },
      "url",
      /must start with postgres:\/\//,
    ],
    [
      "a url postgres.js cannot parse",
      { url: "postgres://app:hunter2@[db" },
      "url",
      /not a connection string/,
    ],
    [
      "a node-postgres Pool",
      { sql: nodePostgresPool() },
      "sql",
      /node-postgres.*does not support yet.*postgres\.js/,
    ],
    [
      "a drizzle database on node-postgres",
      { db: { $client: nodePostgresPool() } },
      "db",
      /drizzle-orm\/postgres-js/,
    ],
    ["a postgres.js pool not wrapped in { sql }", postgres(SERVER_URL), "", /goes in `sql`/],
  ];
  test.each(cases)("%s", (_, connection, path, message) => {
    const error = thrown(() => PostgresStorage(connection as PostgresConnection));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe("INVALID_CONFIGURATION");
    expect((error as ConfigurationError).issues).toEqual([{ path, message: expect.stringMatching(message) }]);
    // A connection string's password is never repeated.
    expect((error as Error).message).not.toContain("hunter2");
  });

  test("prepare and listen options that cannot work are named with the fix, the password never repeated", () => {
    const cases: [string, unknown, unknown, string, RegExp][] = [
      [
        "prepare with your own pool",
        { sql: postgres(SERVER_URL) },
        { prepare: false },
        "prepare",
        /postgres\(url, \{ prepare: false \}\)/,
      ],
      [
        "prepare that is not a boolean",
        { url: SERVER_URL },
        { prepare: "no" },
        "prepare",
        /true \(the default\) or false/,
      ],
      [
        "listen on a URL that is not postgres://",
        { url: SERVER_URL },
        { listen: { url: "db:5432" } },
        "listen",
        /\{ url \} with a postgres:\/\//,
      ],
      [
        "listen as a bare string",
        { url: SERVER_URL },
        { listen: "postgres://app:hunter2@db/app" },
        "listen",
        /true .* false .* \{ url \}/,
      ],
    ];
    for (const [, connection, options, path, message] of cases) {
      const error = thrown(() => PostgresStorage(connection as PostgresConnection, options as never));
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).issues).toEqual([
        { path, message: expect.stringMatching(message) },
      ]);
      expect((error as Error).message).not.toContain("hunter2");
    }
  });

  test("the dedup store and the standalone migrate() say the same", async () => {
    expect(thrown(() => PostgresDedupStore({ sql: nodePostgresPool() } as never))).toMatchObject({
      code: "INVALID_CONFIGURATION",
      message: expect.stringMatching(/^Invalid PostgresDedupStore options:\n {2}- sql: is a node-postgres/),
    });
    await expect(migrate(nodePostgresPool() as never)).rejects.toMatchObject({
      code: "INVALID_CONFIGURATION",
      message: expect.stringContaining("node-postgres"),
    });
  });
});

describe("a database that cannot be used is STORAGE_UNAVAILABLE, naming what was tried", () => {
  test("nothing listening: migrate(), the first query, send() and start() name the host and port", async () => {
    const port = await closedPort();
    const storage = PostgresStorage({ url: `postgres://postgres@127.0.0.1:${port}/app` });
    const unmigrated = PostgresStorage(
      { url: `postgres://postgres@127.0.0.1:${port}/app` },
      { migrate: false },
    );
    const postel = Postel({ outbound: { storage } });
    cleanups.push(
      () => postel.close(),
      () => unmigrated.close(),
    );
    const calls = [
      () => storage.migrate(),
      () => storage.getEndpoint("ep_1"),
      () => unmigrated.getEndpoint("ep_1"),
      () => postel.outbound.send({ type: "order.created", data: {} }),
      () => postel.start(),
    ];
    for (const call of calls) {
      const error = await rejection(call());
      expect(error.code).toBe("STORAGE_UNAVAILABLE");
      expect(error.message).toContain(`PostgreSQL at 127.0.0.1:${port}, database "app", user "postgres"`);
      expect(error.message).toMatch(/refused: nothing is listening.*Start PostgreSQL there, or fix the host/);
      expect(error.cause).toMatchObject({ code: "ECONNREFUSED" });
    }
  });

  test("a database that does not exist is named, with the fix", async () => {
    const url = new URL(SERVER_URL);
    url.pathname = "/postel_no_such_database";
    const storage = PostgresStorage({ url: url.toString() });
    cleanups.push(() => storage.close());
    const error = await rejection(storage.getEndpoint("ep_1"));
    expect(error.code).toBe("STORAGE_UNAVAILABLE");
    expect(error.message).toMatch(
      /database "postel_no_such_database".*the database does not exist.*CREATE DATABASE/,
    );
    expect(error.cause).toMatchObject({ code: "3D000" });
  });

  test("workers report a database that stops taking connections as STORAGE_UNAVAILABLE error events", async () => {
    const database = await createTestDatabase();
    const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    cleanups.push(
      () => database.drop(),
      () => admin.end({ timeout: 5 }),
    );
    // The pool's one connection closes itself between polls, so the next claim has to open a new one,
    // which the database refuses. (Killing connections mid-query instead can leave postgres.js 3.4
    // with a query that never settles, or an unhandled rejection from its type lookup.)
    const sql = database.connect({ max: 1, idle_timeout: 0.05 });
    const postel = Postel({
      outbound: { storage: PostgresStorage({ sql }), workers: { pollInterval: "200ms" } },
    });
    const errors: unknown[] = [];
    postel.on("error", ({ error }) => errors.push(error));
    await postel.start();
    cleanups.push(
      () => postel.close(),
      () => admin.unsafe(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`),
    );

    await admin.unsafe(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS false`);
    const deadline = Date.now() + 10_000;
    while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error).toMatchObject({
        code: "STORAGE_UNAVAILABLE",
        message: expect.stringContaining(`database "${database.name}"`),
      });
    }
  });
});

describe("an endpoint's secret never leaks through a database error", () => {
  const db = migratedDatabase();
  // How the write is broken, how it is repaired, and what the error still says once scrubbed.
  const breakages: [string, string, string, object][] = [
    [
      "a CHECK constraint, whose detail quotes the row",
      "ALTER TABLE postel.endpoint_secrets ADD CONSTRAINT refuse_all CHECK (false) NOT VALID",
      "ALTER TABLE postel.endpoint_secrets DROP CONSTRAINT refuse_all",
      { code: "23514", constraint_name: "refuse_all", table_name: "endpoint_secrets" },
    ],
    [
      "a trigger that raises the secret in its message, detail and hint",
      `CREATE FUNCTION postel.refuse_secret() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'refused %', NEW.secret USING DETAIL = NEW.secret, HINT = NEW.secret; END $$;
       CREATE TRIGGER refuse_secret BEFORE INSERT ON postel.endpoint_secrets
         FOR EACH ROW EXECUTE FUNCTION postel.refuse_secret()`,
      "DROP TRIGGER refuse_secret ON postel.endpoint_secrets; DROP FUNCTION postel.refuse_secret()",
      { code: "P0001", message: "refused [secret]", hint: "[secret]" },
    ],
    [
      "a missing table",
      "ALTER TABLE postel.endpoint_secrets RENAME TO endpoint_secrets_away",
      "ALTER TABLE postel.endpoint_secrets_away RENAME TO endpoint_secrets",
      { code: "SCHEMA_MISMATCH", cause: expect.objectContaining({ code: "42P01" }) },
    ],
  ];

  test.each(breakages)("%s: endpoints.create and rotateSecret", async (_, breakIt, repair, expected) => {
    const postel = Postel({
      outbound: {
        storage: PostgresStorage({ sql: db.sql }, { migrate: false }),
        http: { allowPrivateNetworks: true },
      },
    });
    const endpoint = await postel.outbound.endpoints.create({ url: "http://127.0.0.1:9/hook", types: ["*"] });
    await db.sql.unsafe(breakIt);
    cleanups.push(() => db.sql.unsafe(repair));

    const created = generateSecret();
    const rotated = generateSecret();
    const failures: [unknown, string][] = [
      [
        await failure(postel.outbound.endpoints.create({ url: "http://127.0.0.1:9/hook", secret: created })),
        created,
      ],
      [await failure(postel.outbound.endpoints.rotateSecret(endpoint.id, { secret: rotated })), rotated],
    ];
    for (const [error, secret] of failures) {
      expect(error).toMatchObject(expected);
      expect(findSecret(error, secret)).toEqual([]);
    }
  });
});
