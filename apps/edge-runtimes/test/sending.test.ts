import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

// Sending stays on Node (issue 31 asks what happens elsewhere): Deno runs the real undici and sends;
// on Bun, undici is a partial shim, so Postel refuses `outbound` at once with a coded error instead
// of retrying every delivery into the dead-letter queue.
const APP = new URL("../", import.meta.url).pathname;
const SCRIPT = join(APP, "fixtures", "send.mjs");

function run(
  bin: "deno" | "bun",
  args: string[],
): { error?: { code: string; message: string }; succeeded?: number; received?: unknown[] } {
  const home = mkdtempSync(join(tmpdir(), `postel-send-${bin}-`));
  try {
    const result = spawnSync(join(APP, "node_modules", ".bin", bin), args, {
      cwd: APP,
      env: { ...process.env, HOME: home, DENO_DIR: join(home, "deno"), NO_COLOR: "1" },
      encoding: "utf8",
      timeout: 120_000,
    });
    if (result.error)
      throw new Error(`${bin} could not be started (${result.error.message}); is it installed?`);
    const line = result.stdout.trim().split("\n").at(-1) ?? "";
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(
        `${bin} printed no report (exit ${result.status}):\n${result.stdout}\n${result.stderr}`,
      );
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

describe("sending outside Node", () => {
  test("Deno: a webhook is sent and received", () => {
    const report = run("deno", ["run", "--quiet", "-A", SCRIPT]);
    expect(report.error).toBeUndefined();
    expect(report.succeeded).toBe(1);
    expect(report.received).toEqual([expect.objectContaining({ type: "order.created", data: { n: 1 } })]);
  }, 150_000);

  test("Bun: Postel({ outbound }) is refused with INVALID_CONFIGURATION, saying to send from Node", () => {
    const report = run("bun", ["run", SCRIPT]);
    expect(report.error?.code).toBe("INVALID_CONFIGURATION");
    expect(report.error?.message).toContain("sending webhooks needs Node.js or Deno");
  }, 150_000);
});
