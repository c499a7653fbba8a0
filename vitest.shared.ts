import { defineConfig } from "vitest/config";

/**
 * Shared Vitest settings for every workspace package.
 *
 * - The `@postel/source` condition resolves sibling packages to their TypeScript sources, so tests
 *   never run against a stale `dist/`.
 * - A JSON report per package lets `scripts/assert-tests-ran.mjs` fail CI when a package ran no test.
 */
export function postelVitestConfig(overrides: { testTimeout?: number; include?: string[] } = {}) {
  return defineConfig({
    // Only "node" besides ours: Vitest hands SSR conditions to Node as --conditions, and "import" or
    // "module" there make require() load dual packages' ESM builds (Express 5's router breaks).
    resolve: { conditions: ["@postel/source", "node"] },
    ssr: { resolve: { conditions: ["@postel/source", "node"] } },
    test: {
      include: overrides.include ?? ["src/**/*.test.ts", "test/**/*.test.ts"],
      testTimeout: overrides.testTimeout ?? 20_000,
      hookTimeout: 30_000,
      passWithNoTests: false,
      reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]],
    },
  });
}
