import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { COMMANDS } from "../src/commands.js";
import { postel } from "./support/cli.js";
import { createPostgresDatabase, createSqliteDatabase, type TestDatabase } from "./support/databases.js";

describe("help", () => {
  test("postel --help lists every command, the database flag and the exit codes", async () => {
    const help = await postel(undefined, ["--help"]);
    expect(help.code).toBe(0);
    for (const command of COMMANDS) expect(help.stdout).toContain(command.name);
    expect(help.stdout).toContain("POSTEL_DATABASE_URL");
    expect(help.stdout).toMatch(
      /Exit codes:\n {2}0 {2}ok\n {2}1 {2}unexpected error\n {2}2 {2}usage error[^\n]*\n {2}3 {2}not found[^\n]*\n {2}4 {2}database unreachable or not migrated/,
    );
  });

  test("every command has --help, with its options and the exit codes, and needs no database", async () => {
    const runs = await Promise.all(COMMANDS.map((c) => postel(undefined, [...c.name.split(" "), "--help"])));
    for (const [i, run] of runs.entries()) {
      const command = COMMANDS[i]!;
      expect(run.code, command.name).toBe(0);
      expect(run.stdout).toContain(`Usage: postel ${command.name}`);
      for (const option of Object.keys(command.options)) expect(run.stdout).toContain(`--${option}`);
      expect(run.stdout).toContain("--json");
      expect(run.stdout).toContain("Exit codes:");
    }
  }, 60_000);

  test("a group's --help lists its commands; a group alone is a usage error", async () => {
    const help = await postel(undefined, ["endpoints", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("endpoints rotate-secret <id>");
    const bare = await postel(undefined, ["messages"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("messages show <id>");
    const version = await postel(undefined, ["--version"]);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("usage errors exit 2", () => {
  let sqlite: TestDatabase;
  beforeAll(async () => {
    sqlite = await createSqliteDatabase();
    expect((await postel(sqlite.url, ["migrate"])).code).toBe(0);
  });
  afterAll(() => sqlite?.drop());

  test.each([
    [["frobnicate"], 'Unknown command "frobnicate"'],
    [["endpoints", "explode"], 'Unknown command "endpoints explode"'],
    [["stats", "--bogus"], "Unknown option '--bogus'."],
    [["messages", "list", "--limit", "0"], "--limit must be a whole number from 1 to 1000"],
    [["messages", "list", "--since", "yesterday"], "--since must be an ISO time"],
    [["messages", "list", "--status", "lost"], "--status must be one of"],
    [["stats", "--window", "an hour"], "--window must be a duration"],
    [["messages", "show"], "Missing the message id"],
    [["endpoints", "create"], "--url is required"],
    [
      ["endpoints", "create", "--url", "https://example.com", "--header", "novalue"],
      "--header must be name=value",
    ],
    [["replay"], "Say what to replay"],
    [["replay", "--endpoint", "ep_1", "--yes"], "--endpoint needs --since"],
    [["endpoints", "show", "ep_1", "extra"], 'Unexpected argument "extra"'],
  ])("postel %j", async (args, message) => {
    const run = await postel(sqlite.url, args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^postel: USAGE: /);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe("");
  });

  test("without --db or POSTEL_DATABASE_URL, it says how to name the database", async () => {
    const run = await postel(undefined, ["stats"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("pass --db <postgres-url|sqlite-file> or set POSTEL_DATABASE_URL");
  });

  test("--db wins over POSTEL_DATABASE_URL, and an unknown scheme is refused", async () => {
    const run = await postel("postgres://nobody@127.0.0.1:1/none", ["stats", "--db", sqlite.url, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const mysql = await postel(undefined, ["stats", "--db", "mysql://root:pw@localhost/x"]);
    expect(mysql.code).toBe(2);
    expect(mysql.stderr).toContain("mysql://root:***@localhost/x");
    expect(mysql.stderr).not.toContain(":pw@");
  });
});

describe("database errors exit 4 with the fix", () => {
  test("an unreachable Postgres: exit 4, the host named, the password never printed", async () => {
    const run = await postel("postgres://app:hunter2@127.0.0.1:1/shop", ["stats"]);
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/^postel: STORAGE_UNAVAILABLE: Could not use PostgreSQL at 127\.0\.0\.1:1/);
    expect(run.stderr + run.stdout).not.toContain("hunter2");
  });

  test("a Postgres database that was never migrated: exit 4, run `postel migrate`; after it, exit 0", async () => {
    const database = await createPostgresDatabase();
    try {
      const run = await postel(database.url, ["messages", "list"]);
      expect(run.code).toBe(4);
      expect(run.stderr).toMatch(/^postel: SCHEMA_MISMATCH: /);
      expect(run.stderr).toContain("Run `postel migrate`");
      expect((await postel(database.url, ["migrate"])).code).toBe(0);
      expect((await postel(database.url, ["messages", "list"])).code).toBe(0);
    } finally {
      await database.drop();
    }
  });

  test("a SQLite file that does not exist: exit 4, and it is not created", async () => {
    const sqlite = await createSqliteDatabase();
    try {
      const run = await postel(sqlite.url, ["endpoints", "list"]);
      expect(run.code).toBe(4);
      expect(run.stderr).toContain(`No SQLite database at ${sqlite.url}`);
      expect(run.stderr).toContain("postel migrate");
      expect(existsSync(sqlite.url)).toBe(false);
    } finally {
      await sqlite.drop();
    }
  });
});
