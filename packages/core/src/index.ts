export { Postel } from "./postel.js";
export type { Outbound, PostelInstance, SendInput } from "./postel.js";
export type {
  AutoDisableOptions,
  CircuitBreakerOptions,
  EndpointLimitOptions,
} from "./config/endpoint-options.js";
export type {
  HttpOptions,
  OutboundOptions,
  PostelOptions,
  RetentionOptions,
  TelemetryOptions,
  WorkerOptions,
} from "./config/options.js";
export { Custom, DEFAULT_SCHEDULE, ExponentialBackoff, LinearBackoff } from "./backoff.js";
export type {
  CustomBackoffOptions,
  CustomRetryPolicy,
  ExponentialBackoffOptions,
  LinearBackoffOptions,
  RetryPolicy,
  StorableRetryPolicy,
} from "./backoff.js";
export { InMemoryStorage } from "./storage/in-memory-storage.js";
export type { InMemoryStorageOptions, InMemoryTransaction } from "./storage/in-memory-storage.js";
export { ManualClock, systemClock } from "./clock.js";
export type { Clock, TimerHandle } from "./clock.js";
export type { Duration } from "./duration.js";
export type { Random } from "./random.js";
export type { EventFilter, FilterCondition, FilterOperators } from "./event-filter.js";
export type { DrainOptions, DrainResult } from "./engine/dispatcher.js";
export type { PostelEventMap, PostelEventName } from "./engine/events.js";
export type { EndpointsApi, ListEndpointsOptions } from "./outbound/endpoints.js";
export type { ListMessagesOptions, MessagesApi } from "./outbound/messages.js";
export type { DeadLettersApi, ListDeadLettersOptions } from "./outbound/dead-letters.js";
export type { ListHeldKeysOptions, OrderingKeysApi, SkippedKey } from "./outbound/ordering-keys.js";
export type { AttemptFeedOptions, AttemptsApi, RecentAttemptsOptions } from "./outbound/attempts.js";
export type {
  AuditEntry,
  AuditLogApi,
  CountAuditEntriesOptions,
  ListAuditEntriesOptions,
} from "./outbound/audit-log.js";
export { AUDIT_ENTRY_LIMITS, type AuditEntryInput } from "./outbound/audit-entry-input.js";
export type { AttemptTotals, EndpointStats, OutboundStats, StatsOptions } from "./outbound/stats.js";
export { HELD_KEYS_IN_STATS, STATS_COUNT_CAP, STATS_ENDPOINT_COUNT_CAP } from "./outbound/stats.js";
export type { Timeline, TimelineOptions } from "./outbound/timeline.js";
export type {
  ActivityTime,
  EndpointActivity,
  EndpointActivityOptions,
} from "./outbound/endpoint-activity.js";
export { ACTIVITY_LOOKBACK_MS } from "./outbound/endpoint-activity.js";
export type { Page } from "./outbound/page.js";
export { PAGE_LIMITS } from "./outbound/page.js";
export { SEARCH_WINDOW } from "./outbound/messages.js";
export { SEND_BATCH_MAX_BYTES, SEND_BATCH_MAX_EVENTS } from "./outbound/send-batch.js";
export {
  type AnyEventCatalog,
  type CatalogEvent,
  defineEvents,
  EVENT_CATALOG_MAX_TYPES,
  EVENT_DESCRIPTION_MAX,
  EVENT_GROUP_MAX,
  type EventCatalog,
  type EventDefinition,
  type EventDefinitions,
  isEventCatalog,
} from "./outbound/catalog.js";
export {
  CatalogExportError,
  type CatalogExportIssue,
  catalogJsonSchemas,
  catalogOpenApi,
  type JsonSchema,
  type OpenApiOptions,
} from "./outbound/catalog-export.js";
export type { TestEventInput } from "./outbound/send-test.js";
export type { ReplayedDelivery, ReplayOptions, ReplayProgress, ReplaySelection } from "./outbound/replay.js";
export type { PruneOptions, PruneResult } from "./outbound/prune.js";
export type {
  CreateEndpointInput,
  Endpoint,
  Message,
  OutboundEvent,
  SendEvent,
  SendResult,
  UpdateEndpointInput,
} from "./outbound/types.js";
export type { HttpErrorCode, HttpOutcome } from "./classify-response.js";
export {
  CapabilityUnsupportedError,
  ConfigurationError,
  InvalidInputError,
  isPostelError,
  isStorageOutage,
  LeaseLostError,
  NotFoundError,
  PostelError,
  SchemaMismatchError,
  StorageTimeoutError,
  StorageUnavailableError,
} from "./errors.js";
export type { ConfigurationIssue } from "./errors.js";
export { TERMINAL_DELIVERY_STATUSES } from "./storage/records.js";
// The records the user API returns. A storage's own contract and kit: `@postel/core/storage`.
export type {
  AttemptOutcome,
  AttemptRecord,
  DeadLetter,
  DeliveryRecord,
  DeliveryStatus,
  EndpointState,
  KeyFailurePolicy,
  MessageStatus,
} from "./storage/records.js";
export { HEALTH_BUCKET_MS } from "./storage/storage.js";
export type {
  AuditDetailValue,
  FailureStatus,
  HealthBucket,
  HeldKey,
  Storage,
  StorageCapabilities,
  TransactionOf,
} from "./storage/storage.js";
export type { StorageCapability } from "./storage/capabilities.js";
export { idFloor, idTime } from "./ids.js";
export { CredentialError } from "./credentials/credential-error.js";
export type { CredentialsOptions, EncryptionKey, Keyring } from "./credentials/credentials-options.js";
export type { CredentialsApi } from "./credentials/credentials-api.js";
export type { ReencryptOptions, ReencryptResult } from "./credentials/reencrypt.js";
