import { runEngineScenarios } from "@postel/core/testing";
import { sqliteHooks } from "./storage-hooks.js";

runEngineScenarios({ name: sqliteHooks.name, create: sqliteHooks.create, destroy: sqliteHooks.destroy });
