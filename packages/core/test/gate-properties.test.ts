import { InMemoryDedupStore } from "../src/inbound.js";
import { runGateProperties } from "../src/testing.js";

runGateProperties({ name: "memory", dedup: () => InMemoryDedupStore() });
