import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";

test("the build imports only @postel/signing/inbound: no worker, HTTP client, database driver or next", () => {
  const outDir = mkdtempSync(join(tmpdir(), "postel-adapter-next-"));
  execFileSync(
    "pnpm",
    ["exec", "tsdown", "--out-dir", outDir, "--no-dts", "--no-sourcemap", "--logLevel", "error"],
    {
      cwd: new URL("..", import.meta.url).pathname,
    },
  );
  const code = readdirSync(outDir).map((file) => readFileSync(join(outDir, file), "utf8"));
  rmSync(outDir, { recursive: true, force: true });
  const specifiers = code.flatMap((c) =>
    [...c.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]),
  );
  expect(new Set(specifiers)).toEqual(new Set(["@postel/signing/inbound"]));
}, 60_000);
