import { defineConfig } from "drizzle-kit";

// Generates plain SQL into migrations/ (shipped in the package, applied by `migrate()`).
// `generate` diffs against the snapshots in migrations/meta and needs no database.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/schema.ts",
  out: "./migrations",
  schemaFilter: ["postel"],
});
