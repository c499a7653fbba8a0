import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { runInputProperties } from "../src/testing.js";

// Validation does not depend on the storage, so memory, the cheapest, takes the most runs.
runInputProperties({
  name: "memory",
  create: () => InMemoryStorage(),
  transaction: (storage, fn) => storage.transaction(fn),
  numRuns: 1000,
});
