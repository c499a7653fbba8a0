import { spawn } from "node:child_process";
import type { AttemptRecord, Endpoint, PostelInstance, Storage } from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { BIN, type CliRun, postel } from "./support/cli.js";
import { createPostgresDatabase, createSqliteDatabase, type TestDatabase } from "./support/databases.js";
import { application, drainAll, startReceiver } from "./support/seed.js";

// What a hostile receiver answers: clear the screen, write the clipboard (OSC 52), set the window
// title, overwrite the line with a carriage return, a C1 CSI, and a right-to-left override.
const BODY = "nope\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\rall good\x9b2J\u202eevil";
const VISIBLE = ["\\x1b[2J", "\\x1b]52;c;ZXZpbA==\\x07", "\\x1b]0;pwned\\x07", "\\r", "\\x9b2J", "\\u202e"];
// Any of them raw, or any other control a terminal acts on (line feeds are the CLI's own).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function expectSafe(run: CliRun, name: string): void {
  expect(run.code, `${name}: ${run.stderr}`).toBe(0);
  expect(run.stdout + run.stderr, name).not.toMatch(RAW);
}

describe.each([
  ["SQLite", createSqliteDatabase],
  ["PostgreSQL", createPostgresDatabase],
])("what a receiver or an endpoint says reaches the terminal visibly, on %s", (_, createDatabase) => {
  let database: TestDatabase;
  let app: PostelInstance<Storage<unknown>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let endpoint: Endpoint;
  let rejected: string;
  let failed: string;

  beforeAll(async () => {
    database = await createDatabase();
    expect((await postel(database.url, ["migrate"])).code).toBe(0);
    receiver = await startReceiver(BODY);
    app = application(database.url);
    // The URL and the description carry controls too (both are stored as given).
    endpoint = await app.outbound.endpoints.create({
      url: receiver.url("/fail?x=\x1b]0;pwned\x07\u202e"),
      types: ["order.*"],
      description: "billing\x1b[2J\rshipping\u202e",
    });
    await app.outbound.endpoints.create({ url: receiver.url("/bad"), types: ["refund.*"] });
    failed = (await app.outbound.send({ type: "order.created", data: { note: "\u202e\x9b" } })).id;
    rejected = (await app.outbound.send({ type: "refund.created", data: {} })).id;
    // A real worker drain against the real receiver: its 500 and 400 answers are recorded as they came.
    await drainAll(app);
    await app.outbound.endpoints.disable(endpoint.id, "paused\x1b]52;c;ZXZpbA==\x07 by ops");
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await receiver?.close();
    await database?.drop();
  });

  test("messages show prints the 500 and 400 bodies with their controls escaped", async () => {
    for (const id of [failed, rejected]) {
      const shown = await postel(database.url, ["messages", "show", id]);
      expectSafe(shown, `messages show ${id}`);
      for (const shownEscape of VISIBLE) expect(shown.stdout).toContain(shownEscape);
    }
    const attempts = await app.outbound.messages.attempts(rejected);
    expect(attempts.map((a) => [a.statusCode, a.responseSnippet])).toEqual([[400, BODY]]);
  });

  test("endpoints show, list and dead-letters list escape the URL, description, reason and error", async () => {
    const shown = await postel(database.url, ["endpoints", "show", endpoint.id]);
    expectSafe(shown, "endpoints show");
    expect(shown.stdout).toMatch(/description\s+billing\\x1b\[2J\\rshipping\\u202e\n/);
    expect(shown.stdout).toContain("/fail?x=\\x1b]0;pwned\\x07\\u202e");
    expect(shown.stdout).toMatch(/disabled because\s+paused\\x1b]52;c;ZXZpbA==\\x07 by ops\n/);
    for (const args of [
      ["endpoints", "list"],
      ["dead-letters", "list"],
      ["failed", "list"],
      ["messages", "list"],
      ["stats"],
    ]) {
      expectSafe(await postel(database.url, args), args.join(" "));
    }
  });

  test("endpoints show prints the receiver's last response with its controls escaped", async () => {
    const shown = await postel(database.url, ["endpoints", "show", endpoint.id]);
    expectSafe(shown, "endpoints show");
    // On one line of its own: the carriage return and the escapes cannot redraw or clear it.
    const line = shown.stdout.split("\n").find((l) => l.startsWith("last response"));
    expect(line).toMatch(
      /^last response\s+nope\\x1b\[2J\\x1b]52;c;ZXZpbA==\\x07\\x1b]0;pwned\\x07\\rall good\\x9b2J\\u202eevil$/,
    );
    const json = await postel(database.url, ["endpoints", "show", endpoint.id, "--json"]);
    expectSafe(json, "endpoints show --json");
    const { activity } = JSON.parse(json.stdout) as { activity: { lastAttempt: AttemptRecord } };
    expect(activity.lastAttempt.responseSnippet).toBe(BODY);
  });

  test("--json is exact JSON that is safe to cat: the same values, every control escaped", async () => {
    const run = await postel(database.url, ["messages", "show", rejected, "--json"]);
    expectSafe(run, "messages show --json");
    const { attempts } = JSON.parse(run.stdout) as { attempts: AttemptRecord[] };
    expect(attempts[0]!.responseSnippet).toBe(BODY);
    expect(run.stdout).toContain("\\u001b]52;c;ZXZpbA==\\u0007");
    expect(run.stdout).toContain("\\u009b2J\\u202eevil");
    const shown = await postel(database.url, ["endpoints", "show", endpoint.id, "--json"]);
    expectSafe(shown, "endpoints show --json");
    expect((JSON.parse(shown.stdout) as { endpoint: Endpoint }).endpoint.description).toBe(
      endpoint.description,
    );
  });

  test("an error repeating what was typed escapes it too", async () => {
    const run = await postel(database.url, ["endpoints", "show", "ep_\x9b2J\u202e"]);
    expect(run.code).toBe(3);
    expect(run.stderr).not.toMatch(RAW);
    expect(run.stderr).toContain('No endpoint with id "ep_\\x9b2J\\u202e"');
  });
});

describe("a closed pipe", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createSqliteDatabase();
    expect((await postel(database.url, ["migrate"])).code).toBe(0);
    const app = application(database.url);
    // Long types make rows of about 300 bytes: a thousand of them are several pipe buffers (64 KiB).
    await app.outbound.sendBatch(
      Array.from({ length: 1000 }, (_, i) => ({ type: `bulk.${"x".repeat(240)}`, data: { i } })),
    );
    await app.close();
  }, 120_000);
  afterAll(() => database?.drop());

  test("postel messages list | head -1 ends quietly: exit 0, nothing on stderr", async () => {
    const whole = await postel(database.url, ["messages", "list", "--limit", "1000"]);
    expect(whole.stdout.length).toBeGreaterThan(4 * 65_536);

    const cli = spawn(process.execPath, [BIN, "messages", "list", "--limit", "1000"], {
      env: { PATH: process.env["PATH"], NO_COLOR: "1", POSTEL_DATABASE_URL: database.url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const head = spawn("head", ["-1"], { stdio: [cli.stdout!, "pipe", "inherit"] });
    // Only head reads the pipe now: once it exits, the CLI's next write fails with EPIPE.
    cli.stdout!.destroy();
    let stderr = "";
    cli.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    let first = "";
    head.stdout!.on("data", (chunk: Buffer) => (first += chunk.toString()));
    const headDone = new Promise((resolve) => head.on("close", resolve));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      cli.on("close", (c, s) => resolve([c, s])),
    );
    await headDone;
    expect(first).toMatch(/^ID\s+TYPE\s+STATUS/);
    expect(stderr).toBe("");
    expect([code, signal]).toEqual([0, null]);
  });
});
