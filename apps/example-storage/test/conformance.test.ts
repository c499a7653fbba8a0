import { runStorageConformance } from "@postel/core/storage/conformance";
import { MapStorage } from "../src/map-storage.js";

// A delivery-only storage: every delivery group runs, each capability group is skipped, saying why.
// With no `transaction` option, the transaction groups are skipped too (MapStorage joins none).
runStorageConformance({ name: "map", create: () => MapStorage() });
