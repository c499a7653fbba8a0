/**
 * `@postel/core/testing`: tools for testing Postel and the storages built for it. Imports vitest, so
 * load it only from test files.
 */
export { ManualClock } from "./clock.js";
export { findSecret } from "./testing/find-secret.js";
export type { CredentialsAtRestGroup, CredentialsAtRestOptions } from "./testing/run-credentials-at-rest.js";
/** Issue 28's proofs (a dump holds no credential, a key rotation under a drain, tampering, the migration). */
export { runCredentialsAtRest } from "./testing/run-credentials-at-rest.js";
export { runAdapterConformance } from "./testing/run-adapter-conformance.js";
export type {
  EngineScenarioGroup,
  EngineScenarioOptions,
  Reply,
  Scenario,
  ScenarioReceiver,
  SeenRequest,
} from "./testing/run-engine-scenarios.js";
export { runEngineScenarios } from "./testing/run-engine-scenarios.js";
/** The catalog write suite: an event the catalog refuses writes nothing, in or out of the caller's transaction. */
export type {
  CatalogWriteConformanceOptions,
  CatalogWriteCounts,
} from "./testing/run-catalog-write-conformance.js";
export { runCatalogWriteConformance } from "./testing/run-catalog-write-conformance.js";
export type {
  AdapterConformanceOptions,
  AdapterResponse,
  ConformanceEvent,
  MountedAdapter,
} from "./testing/run-adapter-conformance.js";
/** The adapter suite's event catalog (`order.created` transforms its data) and a signed event of it, for adapters' own tests. */
export { conformanceEvents, signedEvent } from "./testing/conformance-events.js";
export type { InputPropertyOptions } from "./testing/properties/run-input-properties.js";
export { runInputProperties } from "./testing/properties/run-input-properties.js";
export type { GatePropertyOptions } from "./testing/properties/run-gate-properties.js";
export { runGateProperties } from "./testing/properties/run-gate-properties.js";
