import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";

const packageDir = new URL("..", import.meta.url).pathname;

/** Imports `specifier` in a fresh Node process (built output) and returns every module URL it loaded. */
function modulesLoadedBy(specifier: string): string[] {
  const log = join(mkdtempSync(join(tmpdir(), "postel-loads-")), "loads.txt");
  execFileSync(
    process.execPath,
    [
      "--import",
      "./test/fixtures/record-loads.mjs",
      "--input-type=module",
      "-e",
      `await import(${JSON.stringify(specifier)});`,
    ],
    { cwd: packageDir, env: { ...process.env, POSTEL_LOAD_LOG: log } },
  );
  return readFileSync(log, "utf8").trim().split("\n");
}

const heavy = /\/node_modules\/.*\/(undici|valibot|postgres|@libsql|drizzle-orm|libsql)\//;

describe("a receiver-only install", () => {
  beforeAll(() => {
    // `turbo run test` builds first (test depends on build); a bare `vitest run` builds here.
    if (!existsSync(join(packageDir, "dist/inbound.js"))) {
      execFileSync("pnpm", ["exec", "tsdown", "--logLevel", "error"], { cwd: packageDir, stdio: "inherit" });
    }
  }, 60_000);

  test("@postel/core/inbound loads no worker, HTTP client or database driver", () => {
    const loaded = modulesLoadedBy("@postel/core/inbound");
    expect(loaded.some((url) => url.endsWith("/dist/inbound.js"))).toBe(true);
    expect(loaded.filter((url) => heavy.test(url))).toEqual([]);
    expect(loaded.filter((url) => /dispatcher|http-sender/.test(url))).toEqual([]);
  });

  test("@postel/signing/inbound, where the gate lives, loads nothing but @postel/signing", () => {
    const files = modulesLoadedBy("@postel/signing/inbound").filter((url) => url.startsWith("file:"));
    expect(files.some((url) => url.endsWith("/signing/dist/inbound.js"))).toBe(true);
    expect(files.filter((url) => !/\/signing\/dist\//.test(url))).toEqual([]);
  });

  test("and @postel/signing installs nothing else: no dependencies, only an optional peer for telemetry", () => {
    const signing = JSON.parse(readFileSync(join(packageDir, "../signing/package.json"), "utf8"));
    expect(signing.dependencies ?? {}).toEqual({});
    expect(Object.keys(signing.peerDependencies ?? {})).toEqual(["@opentelemetry/api"]);
    expect(signing.peerDependenciesMeta).toEqual({ "@opentelemetry/api": { optional: true } });
  });

  test("the main entry loads nothing of OpenTelemetry (it is loaded when telemetry is turned on)", () => {
    expect(modulesLoadedBy("@postel/core").filter((url) => /@opentelemetry/.test(url))).toEqual([]);
  });

  test("whereas the main entry does load undici (so the check above can fail)", () => {
    const loaded = modulesLoadedBy("@postel/core");
    expect(loaded.some((url) => /\/undici\//.test(url))).toBe(true);
  });
});
