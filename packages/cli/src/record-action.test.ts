import { hostname, userInfo } from "node:os";
import { type AuditEntryInput, PostelError, StorageTimeoutError } from "@postel/core";
import { describe, expect, test } from "vitest";
import { CliError } from "./exit-codes.js";
import { Output } from "./output.js";
import { ActionNotRecorded, auditUrl, osActor, recordAction, resolveActor } from "./record-action.js";

function capture(json = false) {
  const text = { stdout: "", stderr: "" };
  const out = new Output(
    { write: (s: string) => (text.stdout += s) },
    { write: (s: string) => (text.stderr += s) },
    {},
    json,
  );
  return { out, text };
}

describe("the actor", () => {
  test("is --actor, else POSTEL_ACTOR, as given; else the OS account, marked os:", () => {
    expect(resolveActor("ada@acme.test", { POSTEL_ACTOR: "deploy-bot" })).toBe("ada@acme.test");
    expect(resolveActor(undefined, { POSTEL_ACTOR: "deploy-bot" })).toBe("deploy-bot");
    expect(resolveActor(undefined, {})).toBe(`os:${userInfo().username}@${hostname()}`);
    // An empty variable is unset, as POSTEL_DATABASE_URL's is.
    expect(resolveActor(undefined, { POSTEL_ACTOR: "" })).toBe(osActor());
  });

  test("an empty, blank or over-long name is a usage error naming where it came from", () => {
    const refused = (flag: string | undefined, env: NodeJS.ProcessEnv) => {
      try {
        resolveActor(flag, env);
      } catch (error) {
        return error instanceof CliError ? [error.exitCode, error.message] : error;
      }
      return "accepted";
    };
    expect(refused("", {})).toEqual([2, expect.stringMatching(/^--actor must name who is acting/)]);
    expect(refused("  ", {})).toEqual([2, expect.stringMatching(/^--actor must name who is acting/)]);
    expect(refused("a".repeat(201), {})).toEqual([2, "--actor must be at most 200 characters; it has 201."]);
    expect(refused(undefined, { POSTEL_ACTOR: "a".repeat(201) })).toEqual([
      2,
      "POSTEL_ACTOR must be at most 200 characters; it has 201.",
    ]);
    expect(resolveActor("a".repeat(200), {})).toHaveLength(200);
  });
});

// An audit log that keeps what it is given.
function writer() {
  const entries: AuditEntryInput[] = [];
  return { entries, log: { record: async (entry: AuditEntryInput) => void entries.push(entry) } };
}

describe("recordAction", () => {
  test("writes the entry from the cli, leaving out what is undefined and cutting long text", async () => {
    const { entries, log } = writer();
    const { out, text } = capture();
    await recordAction(
      log,
      "ada",
      { action: "endpoint.disable", target: "ep_1", detail: { reason: "x".repeat(300), url: undefined } },
      out,
    );
    await recordAction(log, "ada", { action: "history.prune", target: null }, out);
    expect(entries).toEqual([
      {
        actor: "ada",
        action: "endpoint.disable",
        target: "ep_1",
        source: "cli",
        detail: { reason: `${"x".repeat(255)}…` },
      },
      { actor: "ada", action: "history.prune", target: null, source: "cli", detail: null },
    ]);
    expect(text).toEqual({ stdout: "", stderr: "" });
  });

  test("a cut never leaves half a surrogate pair, which the audit log refuses", async () => {
    const { entries, log } = writer();
    const { out } = capture();
    // 255 units of "x" then an emoji (two units): the cut falls between its halves.
    await recordAction(
      log,
      "ada",
      { action: "endpoint.update", target: "ep_1", detail: { url: `${"x".repeat(254)}😀tail` } },
      out,
    );
    expect(entries[0]!.detail).toEqual({ url: `${"x".repeat(254)}…` });
  });

  test("a storage without an audit log: the action stands, one warning line says it was not recorded", async () => {
    const unsupported = {
      record: async () => {
        throw new PostelError("AUDIT_LOG_UNSUPPORTED", "The custom storage has no audit log.");
      },
    };
    const human = capture();
    await recordAction(unsupported, "ada", { action: "endpoint.disable", target: "ep_1" }, human.out);
    expect(human.text).toEqual({
      stdout: "",
      stderr:
        "postel: warning: AUDIT_LOG_UNSUPPORTED: endpoint.disable ep_1 was not recorded: this storage has no audit log.\n",
    });
    const json = capture(true);
    await recordAction(unsupported, "ada", { action: "history.prune", target: null }, json.out);
    expect(JSON.parse(json.text.stderr)).toEqual({
      warning: {
        code: "AUDIT_LOG_UNSUPPORTED",
        message: "history.prune was not recorded: this storage has no audit log.",
      },
    });
  });

  test("any other failure to record says the action was done, with its cause", async () => {
    const cause = new StorageTimeoutError("The statement timed out.");
    const failing = {
      record: async () => {
        throw cause;
      },
    };
    const error = await recordAction(
      failing,
      "ada",
      { action: "endpoint.disable", target: "ep_1" },
      capture().out,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ActionNotRecorded);
    expect((error as ActionNotRecorded).cause).toBe(cause);
    expect((error as Error).message).toBe(
      "endpoint.disable ep_1 was done, but could not be recorded in the audit log",
    );
  });
});

test("a URL goes into the audit log without its password", () => {
  expect(auditUrl("https://user:pa55@hooks.example.com/x?y=1")).toBe(
    "https://user:***@hooks.example.com/x?y=1",
  );
  expect(auditUrl("https://hooks.example.com/x")).toBe("https://hooks.example.com/x");
});
