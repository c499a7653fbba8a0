import { runStorageConformance } from "@postel/core/storage/conformance";
import { migratedDatabase, postgresHooks } from "./support/database.js";

// One database per file, migrated once; each test starts from empty tables on a shared pool.
runStorageConformance(postgresHooks(migratedDatabase()));
