import { runStorageConformance } from "@postel/core/storage/conformance";
import { sqliteHooks } from "./storage-hooks.js";

runStorageConformance(sqliteHooks);
