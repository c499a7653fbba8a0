import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { COMMANDS } from "../src/commands.js";
import { type CliRun, postel } from "./support/cli.js";
import {
  createPostgresDatabase,
  createSqliteDatabase,
  SERVER_URL,
  type TestDatabase,
} from "./support/databases.js";

describe("help", () => {
  test("postel --help lists every command, the database flag and the exit codes", async () => {
    const help = await postel(undefined, ["--help"]);
    expect(help.code).toBe(0);
    for (const command of COMMANDS) expect(help.stdout).toContain(command.name);
    expect(help.stdout).toContain("POSTEL_DATABASE_URL");
    expect(help.stdout).toMatch(
      /Exit codes:\n {2}0 {2}ok\n {2}1 {2}unexpected error\n {2}2 {2}usage error[^\n]*\n {2}3 {2}not found[^\n]*\n {2}4 {2}database unreachable or not migrated[^\n]*\n {2}5 {2}check failed: a threshold/,
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

describe("the audit log's actor", () => {
  test("every command that changes data refuses an empty --actor before it opens the database", async () => {
    const audited = COMMANDS.filter((c) => c.audited).map((c) => c.name);
    expect(audited).toEqual([
      "endpoints create",
      "endpoints update",
      "endpoints delete",
      "endpoints enable",
      "endpoints disable",
      "endpoints rotate-secret",
      "endpoints secret",
      "endpoints send-test",
      "keys skip",
      "replay",
      "prune",
    ]);
    // No database is named: reaching for one would say so instead.
    const runs = await Promise.all(
      audited.map((name) => postel(undefined, [...name.split(" "), "--actor", ""])),
    );
    for (const [i, run] of runs.entries()) {
      expect([run.code, run.stderr], audited[i]).toEqual([
        2,
        "postel: USAGE: --actor must name who is acting (e.g. --actor ada@acme.test); it is empty.\n",
      ]);
    }
    const env = await postel(undefined, ["prune", "--older-than", "1d", "--yes"], {
      POSTEL_ACTOR: "x".repeat(201),
    });
    expect(env.stderr).toBe("postel: USAGE: POSTEL_ACTOR must be at most 200 characters; it has 201.\n");
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
    [["endpoints", "disable", "ep_1", "--actor", ""], "--actor must name who is acting"],
    [["stats", "--actor", "x".repeat(201)], "--actor must be at most 200 characters"],
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

describe("with --json, a failure is one JSON object on stderr", () => {
  test.each([
    [["messages", "list", "--status", "lost", "--json"], "USAGE", 2, "--status must be one of"],
    [["stats", "--bogus", "--json"], "USAGE", 2, "Unknown option '--bogus'"],
    [["frobnicate", "--json"], "USAGE", 2, 'Unknown command "frobnicate"'],
    [["messages", "--json"], "USAGE", 2, "Missing the messages command"],
    [
      ["stats", "--json", "--db", "postgres://app:hunter2@127.0.0.1:1/shop"],
      "STORAGE_UNAVAILABLE",
      4,
      "127.0.0.1:1",
    ],
  ])("postel %j", async (args, code, exitCode, message) => {
    const run = await postel(undefined, args);
    expect(run.code).toBe(exitCode);
    expect(run.stdout).toBe("");
    expect(run.stderr.endsWith("}\n") && run.stderr.split("\n")).toHaveLength(2);
    const { error } = JSON.parse(run.stderr) as {
      error: { code: string; message: string; exitCode: number };
    };
    expect(error).toMatchObject({ code, exitCode });
    expect(error.message).toContain(message);
    expect(run.stderr).not.toContain("hunter2");
  });

  test("without --json, the same failure is the human line", async () => {
    const run = await postel(undefined, ["messages", "list", "--status", "lost"]);
    expect(run.stderr).toMatch(/^postel: USAGE: --status must be one of/);
  });
});

describe("check: every threshold is read before the database", () => {
  // Reaching for either would be exit 4, not 2: nothing listens on port 1, and opening a SQLite file
  // that does not exist fails at once (a Postgres pool connects only on its first query).
  const unreachable = "postgres://app:hunter2@127.0.0.1:1/shop";
  const missing = "/nonexistent/postel.db";

  test.each([
    [
      [],
      "Give at least one threshold: --max-oldest-due <duration>, --max-due <n>, --max-dead-letters <n>, --max-failed <n>, --max-disabled <n>, --max-held-keys <n>.",
    ],
    [
      ["--max-oldest-due", "five minutes"],
      '--max-oldest-due must be a duration like "30s", "5m", "2h" or "1d"; got "five minutes".',
    ],
    [["--max-dead-letters", "1.5"], "--max-dead-letters must be a whole number from 0"],
    [["--max-disabled", "0", "--max-failed", "many"], "--max-failed must be a whole number from 0"],
    [["--max-due", "0", "extra"], 'Unexpected argument "extra"'],
  ])("postel check %j exits 2", async (args, message) => {
    for (const run of await Promise.all([unreachable, missing].map((db) => postel(db, ["check", ...args])))) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/^postel: USAGE: /);
      expect(run.stderr).toContain(message);
    }
  });

  test("an unreachable database exits 4, not 5: a probe tells it from an unhealthy outbox", async () => {
    const run = await postel(unreachable, ["check", "--max-dead-letters", "0"]);
    expectDatabaseFailure(run, "STORAGE_UNAVAILABLE", "connection was refused");
  });
});

// The library's advice (its API, its options) and a driver's stack are not for the operator.
const NOT_CLI_WORDING =
  /endpoints\.list\(\)|outbound: \{|storage\.migrate|migrate: false|`url`|pool's options|\n\s+at /;

function expectDatabaseFailure(run: CliRun, code: string, ...advice: string[]): void {
  expect(run.code, run.stderr).toBe(4);
  expect(run.stdout).toBe("");
  expect(run.stderr).toMatch(new RegExp(`^postel: ${code}: `));
  expect(run.stderr.trimEnd().split("\n"), "one line").toHaveLength(1);
  for (const text of advice) expect(run.stderr).toContain(text);
  expect(run.stderr).not.toMatch(NOT_CLI_WORDING);
  expect(run.stderr).not.toContain("hunter2");
}

describe("database errors exit 4 with the fix", () => {
  test("an unreachable Postgres: exit 4, the host named, the password never printed", async () => {
    const run = await postel("postgres://app:hunter2@127.0.0.1:1/shop", ["stats"]);
    expect(run.stderr).toMatch(/^postel: STORAGE_UNAVAILABLE: Could not use PostgreSQL at 127\.0\.0\.1:1/);
    expectDatabaseFailure(run, "STORAGE_UNAVAILABLE", "connection was refused", "--db / POSTEL_DATABASE_URL");
  });

  test("a file that is not a SQLite database, and a directory", async () => {
    expectDatabaseFailure(
      await postel(undefined, ["messages", "list", "--db", "/etc/passwd"]),
      "STORAGE_UNAVAILABLE",
      "/etc/passwd: the file is not a SQLite database",
      "--db / POSTEL_DATABASE_URL",
    );
    const dir = mkdtempSync(join(tmpdir(), "postel-cli-dir-"));
    try {
      expectDatabaseFailure(
        await postel(dir, ["endpoints", "list"]),
        "STORAGE_UNAVAILABLE",
        "that path is a directory, not a database file",
        `e.g. ${dir}/postel.db`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an unreachable libsql server", async () => {
    expectDatabaseFailure(
      await postel("libsql://127.0.0.1:1", ["stats"]),
      "STORAGE_UNAVAILABLE",
      "the libsql server at 127.0.0.1:1",
      "fix the host and port in --db / POSTEL_DATABASE_URL",
    );
  });

  test("a SQLite file that was never migrated says to run `postel migrate`", async () => {
    const sqlite = await createSqliteDatabase();
    try {
      writeFileSync(sqlite.url, "");
      expectDatabaseFailure(
        await postel(sqlite.url, ["messages", "list"]),
        "SCHEMA_MISMATCH",
        "Run `postel migrate`",
      );
    } finally {
      await sqlite.drop();
    }
  });

  describe("on a migrated Postgres database", () => {
    let database: TestDatabase;
    const role = `postel_cli_guest_${Math.random().toString(36).slice(2, 10)}`;
    const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    const as = (user: string, query = "") => {
      const url = new URL(database.url);
      url.username = user;
      url.password = "hunter2";
      url.search = query;
      return url.toString();
    };
    beforeAll(async () => {
      database = await createPostgresDatabase();
      expect((await postel(database.url, ["migrate"])).code).toBe(0);
      await admin.unsafe(`CREATE ROLE ${role} LOGIN`);
    });
    afterAll(async () => {
      await database?.drop();
      await admin.unsafe(`DROP ROLE IF EXISTS ${role}`);
      await admin.end({ timeout: 5 });
    });

    test("a statement timeout: exit 4, STORAGE_TIMEOUT, how to retry or raise it", async () => {
      // Postel's table is locked while the command runs, so its first query waits out the timeout.
      const holder = postgres(database.url, { max: 1, onnotice: () => {} });
      try {
        const run = await holder.begin(async (tx) => {
          await tx`LOCK TABLE postel.migrations IN ACCESS EXCLUSIVE MODE`;
          return postel(as("postgres", "?options=-c%20statement_timeout%3D1000"), ["messages", "list"]);
        });
        expectDatabaseFailure(run, "STORAGE_TIMEOUT", "statement_timeout", "run the command again later");
      } finally {
        await holder.end({ timeout: 5 });
      }
    });

    test("a user without the rights to Postel's tables: permission denied, which user to use", async () => {
      expectDatabaseFailure(
        await postel(as(role), ["messages", "list"]),
        "STORAGE_UNAVAILABLE",
        "permission denied",
        "Put the user your app connects as in --db / POSTEL_DATABASE_URL",
      );
    });
  });

  test("a Postgres database that was never migrated: exit 4, run `postel migrate`; after it, exit 0", async () => {
    const database = await createPostgresDatabase();
    try {
      const run = await postel(database.url, ["messages", "list"]);
      expectDatabaseFailure(run, "SCHEMA_MISMATCH", "Run `postel migrate`");
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
