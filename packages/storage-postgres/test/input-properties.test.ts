import { runInputProperties } from "@postel/core/testing";
import { migratedDatabase, postgresHooks } from "./support/database.js";
import { dumpTables } from "./support/dump-tables.js";

// One database for the suite; every bad input is checked against a dump of every postel table.
const db = migratedDatabase();
runInputProperties({ ...postgresHooks(db), tables: () => dumpTables(db.sql) });
