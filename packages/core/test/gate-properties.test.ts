import { InMemoryDedupStore } from "../src/inbound/dedup.js";
import { runGateProperties } from "../src/testing.js";

runGateProperties({ name: "memory", dedup: () => InMemoryDedupStore() });
