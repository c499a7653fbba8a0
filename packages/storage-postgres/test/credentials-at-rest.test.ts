import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { runCredentialsAtRest } from "@postel/core/testing";
import { migratedDatabase, postgresHooks } from "./support/database.js";

const run = promisify(execFile);

// One database per file, migrated once; each test starts from empty tables. The dump is pg_dump's
// of that database: schema and every row, as a backup would hold them.
const db = migratedDatabase();
const { name, create } = postgresHooks(db);
runCredentialsAtRest({
  name,
  create,
  dump: async () => {
    const { stdout } = await run("pg_dump", ["--no-owner", db.database.url], {
      encoding: "buffer",
      maxBuffer: 256 * 1024 * 1024,
    });
    return stdout;
  },
});
