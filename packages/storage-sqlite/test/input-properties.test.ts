import { runInputProperties } from "@postel/core/testing";
import { dumpTables } from "./dump-tables.js";
import { sqliteHooks } from "./storage-hooks.js";

// A file per run; every bad input is checked against a dump of every table in it.
runInputProperties({ ...sqliteHooks, tables: (storage) => dumpTables(storage.client) });
