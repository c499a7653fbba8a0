import { runStorageConformance } from "@postel/core/testing";
import { sqliteHooks } from "./storage-hooks.js";

runStorageConformance(sqliteHooks);
