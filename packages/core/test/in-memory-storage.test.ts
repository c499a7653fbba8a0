import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { runStorageConformance } from "../src/storage-conformance.js";

runStorageConformance({
  name: "memory",
  create: () => InMemoryStorage(),
  transaction: (storage, fn) => storage.transaction(fn),
});
