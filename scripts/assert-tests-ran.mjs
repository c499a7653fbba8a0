#!/usr/bin/env node
// Fails the build when a workspace package ran no test, or when a library package has no test script.
// Reads the JSON report each package's Vitest run writes (see vitest.shared.ts) and prints one table.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const rows = [];
const problems = [];
const failures = [];

for (const group of ["packages", "apps"]) {
  const dir = join(root, group);
  if (!existsSync(dir)) continue;
  for (const name of readdirSync(dir).sort()) {
    const pkgPath = join(dir, name, "package.json");
    if (!existsSync(pkgPath)) continue;
    const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
    if (!pkg.scripts?.test) {
      if (group === "packages")
        problems.push(`${pkg.name}: has no "test" script; every library package must be tested`);
      continue;
    }
    const reportPath = join(dir, name, ".vitest-report.json");
    if (!existsSync(reportPath)) {
      problems.push(`${pkg.name}: no test report at ${reportPath}; did its test run use vitest.shared.ts?`);
      continue;
    }
    const report = JSON.parse(readFileSync(reportPath, "utf8"));
    const row = {
      package: pkg.name,
      files: report.numTotalTestSuites ?? 0,
      passed: report.numPassedTests ?? 0,
      failed: report.numFailedTests ?? 0,
      skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
    };
    rows.push(row);
    if (row.passed + row.failed === 0) problems.push(`${pkg.name}: its test run executed no test`);
    if (row.failed > 0 || report.success === false)
      problems.push(
        `${pkg.name}: ${row.failed} failing test(s)${row.failed === 0 ? " (the run failed without one: an unhandled error, see its log)" : ""}`,
      );
    // Each failure again, here at the end of the log, where a truncated CI log still shows it.
    for (const file of report.testResults ?? []) {
      for (const test of file.assertionResults ?? []) {
        if (test.status !== "failed") continue;
        const message = (test.failureMessages ?? []).join("\n").split("\n").slice(0, 6).join("\n    ");
        failures.push(
          `${pkg.name} › ${file.name.slice(join(dir, name).length + 1)} › ${test.fullName}\n    ${message}`,
        );
      }
      if (file.status === "failed" && (file.assertionResults ?? []).every((t) => t.status !== "failed"))
        failures.push(
          `${pkg.name} › ${file.name.slice(join(dir, name).length + 1)}: ${String(file.message ?? "failed").split("\n")[0]}`,
        );
    }
  }
}

console.table(rows);
const sum = (k) => rows.reduce((n, r) => n + r[k], 0);
console.log(`Tests: ${sum("passed")} passed, ${sum("failed")} failed, ${sum("skipped")} skipped`);
if (failures.length > 0) console.error(`\nFailed:\n${failures.map((f) => `✗ ${f}`).join("\n")}`);
if (problems.length > 0) {
  console.error(`\n${problems.map((p) => `✗ ${p}`).join("\n")}`);
  process.exit(1);
}
