/**
 * `@postel/core/storage/conformance`: the storage conformance suite, grouped by capability, and the
 * fixtures its tests build records with. Imports vitest, so load it only from test files.
 */
export type { ConformanceGroup, StorageConformanceOptions } from "./testing/run-storage-conformance.js";
export { runStorageConformance } from "./testing/run-storage-conformance.js";
export { newEndpoint, newMessage, T0 } from "./testing/conformance/fixtures.js";
export { pruneAll } from "./testing/conformance/retention.js";
