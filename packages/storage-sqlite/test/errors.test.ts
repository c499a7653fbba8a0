import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { ConfigurationError, isPostelError, Postel, type PostelError } from "@postel/core";
import { generateSecret } from "@postel/signing";
import { afterEach, describe, expect, test } from "vitest";
import { migrate, type SqliteConnection, SqliteDedupStore, SqliteStorage } from "../src/index.js";
import { findSecret } from "@postel/core/testing";
import { tempDatabase } from "./temp-db.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function fresh(): ReturnType<typeof tempDatabase> {
  const file = tempDatabase();
  cleanups.push(file.remove);
  return file;
}

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
    ["a client that is a string", { client: "x" }, "client", /is a string: a path or URL goes in `url`/],
    ["a client that is not a libsql client", { client: {} }, "client", /must be a @libsql\/client client/],
    ["nothing to connect with", {}, "", /needs one of `url`.*`client`.*`db`/],
    ["a bare path", "file:postel.db", "", /goes in `url`: SqliteStorage\(\{ url: "file:postel.db" \}\)/],
    ["a url libsql refuses", { url: "file:postel.db?mode=ro" }, "url", /libsql cannot open it.*mode/],
  ];
  test.each(cases)("%s", (_, connection, path, message) => {
    const error = thrown(() => SqliteStorage(connection as SqliteConnection));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe("INVALID_CONFIGURATION");
    expect((error as ConfigurationError).issues).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  test("the dedup store and the standalone migrate() say the same", async () => {
    expect(thrown(() => SqliteDedupStore({ client: "x" } as never))).toMatchObject({
      code: "INVALID_CONFIGURATION",
      message: expect.stringMatching(/^Invalid SqliteDedupStore options:\n {2}- client: is a string/),
    });
    await expect(migrate("x" as never)).rejects.toMatchObject({
      code: "INVALID_CONFIGURATION",
      message: expect.stringContaining("must be a @libsql/client client"),
    });
  });
});

describe("a database that cannot be opened or reached is STORAGE_UNAVAILABLE, naming what was tried", () => {
  test("a file in a directory that does not exist names the directory", () => {
    const { dir } = fresh();
    const path = join(dir, "missing", "postel.db");
    const error = thrown(() => SqliteStorage({ url: path }));
    expect(error).toMatchObject({
      code: "STORAGE_UNAVAILABLE",
      message: `Could not open the SQLite database at ${path}: its directory ${join(dir, "missing")} does not exist. Create it first, or fix \`url\`.`,
      cause: expect.objectContaining({ message: expect.stringContaining("ConnectionFailed") }),
    });
  });

  test("a path that is a directory says so", () => {
    const { dir } = fresh();
    mkdirSync(join(dir, "data"));
    const error = thrown(() => SqliteDedupStore({ url: `file:${join(dir, "data")}` }));
    expect(error).toMatchObject({
      code: "STORAGE_UNAVAILABLE",
      message: expect.stringMatching(/at .*\/data: that path is a directory, not a database file/),
    });
  });

  test("a libsql server nothing listens at: the first query, a claim and start() name the host and port", async () => {
    const port = await closedPort();
    const storage = SqliteStorage({ url: `http://127.0.0.1:${port}` });
    const postel = Postel({ outbound: { storage } });
    cleanups.push(() => storage.close());
    const calls = [
      () => storage.getEndpoint("ep_1"),
      () => storage.claimDue({ owner: "w", now: 0, until: 1000, limit: 1 }),
      () => storage.migrate(),
      () => postel.start(),
    ];
    for (const call of calls) {
      const error = await rejection(call());
      expect(error.code).toBe("STORAGE_UNAVAILABLE");
      expect(error.message).toMatch(
        new RegExp(
          `^Could not reach the libsql server at 127\\.0\\.0\\.1:${port}: the connection was refused`,
        ),
      );
    }
  });
});

describe("an endpoint's secret never leaks through a database error", () => {
  // libsql's errors carry no statement arguments and SQLite's messages quote no values (a trigger's
  // RAISE takes a literal): this guards that it stays so, as on Postgres.
  const breakages: [string, string, object][] = [
    [
      "a trigger that refuses the write",
      `CREATE TRIGGER refuse_secret BEFORE INSERT ON postel_endpoint_secrets
        BEGIN SELECT RAISE(ABORT, 'refused'); END`,
      { code: "SQLITE_CONSTRAINT" },
    ],
    [
      "a missing table",
      "ALTER TABLE postel_endpoint_secrets RENAME TO endpoint_secrets_away",
      { code: "SCHEMA_MISMATCH" },
    ],
  ];

  test.each(breakages)("%s: endpoints.create and rotateSecret", async (_, breakIt, expected) => {
    const storage = SqliteStorage({ url: fresh().url });
    cleanups.push(() => storage.close());
    const postel = Postel({ outbound: { storage, http: { allowPrivateNetworks: true } } });
    const endpoint = await postel.outbound.endpoints.create({ url: "http://127.0.0.1:9/hook", types: ["*"] });
    await storage.client.execute(breakIt);

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
