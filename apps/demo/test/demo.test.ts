import { spawnSync } from "node:child_process";
import { expect, test } from "vitest";

const main = new URL("../dist/main.js", import.meta.url).pathname;

// The main job is also CI's smoke test: the built demo must run the whole story and exit 0.
test("the demo runs end to end on embedded SQLite and every check passes", () => {
  const run = spawnSync(process.execPath, [main], { encoding: "utf8", timeout: 120_000 });
  const output = `${run.stdout}\n${run.stderr}`;
  expect(output).toContain("✓ the rolled-back order's webhook was never enqueued");
  expect(output).toMatch(/Dashboard: http:\/\/127\.0\.0\.1:\d+\/postel\/\?token=/);
  expect(output).toContain("✓ the dashboard answers 200 to the token's holder");
  expect(output).not.toContain("✗");
  expect(run.status, output).toBe(0);
}, 130_000);
