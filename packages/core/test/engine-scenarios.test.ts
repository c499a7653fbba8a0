import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { runEngineScenarios } from "../src/testing.js";

runEngineScenarios({ name: "memory", create: () => InMemoryStorage() });
