import { defineConfig } from "drizzle-kit";

// Generates the plain-SQL migrations shipped in `migrations/` (`pnpm generate`). They are applied by
// this package's own `migrate()`, never by drizzle-kit's migrator or its journal table.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/schema.ts",
  out: "./migrations",
});
