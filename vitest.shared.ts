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
    resolve: { conditions: ["@postel/source", "module", "node", "import", "default"] },
    ssr: { resolve: { conditions: ["@postel/source", "module", "node", "import", "default"] } },
    test: {
      include: overrides.include ?? ["src/**/*.test.ts", "test/**/*.test.ts"],
      testTimeout: overrides.testTimeout ?? 20_000,
      hookTimeout: 30_000,
      passWithNoTests: false,
      reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]],
    },
  });
}
