import { runEngineScenarios } from "@postel/core/testing";
import { migratedDatabase, postgresHooks } from "./support/database.js";

// One database per file, migrated once; each test starts from empty tables on a shared pool.
const { name, create } = postgresHooks(migratedDatabase());
runEngineScenarios({ name, create });
