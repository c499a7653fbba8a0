import { CapabilityUnsupportedError, type ConfigurationIssue } from "../errors.js";
import type { StorageCapabilities } from "./storage.js";

/** The name of an optional capability: its member on the storage. */
export type StorageCapability = keyof StorageCapabilities;

/** The verbs of the required delivery part (`DeliveryStorage`); each must be a function. */
export const DELIVERY_VERBS = [
  "enqueue",
  "claimFanout",
  "recordFanout",
  "claimDue",
  "renewLeases",
  "recordOutcomes",
  "releaseHeld",
  "createEndpoint",
  "getEndpoint",
  "allEndpoints",
  "endpointsRevision",
  "updateEndpoint",
  "deleteEndpoint",
  "transitionEndpoint",
  "addEndpointSecret",
  "endpointHealth",
  "getMessage",
  "listDeliveries",
  "close",
] as const;

/** What each optional capability is: its interface, its required verbs, and the code of its absence. */
export const CAPABILITIES: {
  readonly [C in StorageCapability]: {
    readonly interface: string;
    readonly verbs: readonly string[];
    readonly code: string;
  };
} = {
  batchSend: { interface: "BatchSendStore", verbs: ["enqueueMany"], code: "BATCH_SEND_UNSUPPORTED" },
  direct: { interface: "DirectDeliveryStore", verbs: ["renewFanoutLeases"], code: "DIRECT_UNSUPPORTED" },
  limits: { interface: "LimitsStore", verbs: ["claimLimited"], code: "LIMITS_UNSUPPORTED" },
  operations: {
    interface: "OperationsStore",
    verbs: ["listEndpoints", "listMessages", "listAttempts", "listDeadLetters", "recentAttempts", "stats"],
    code: "OPERATIONS_UNSUPPORTED",
  },
  ordering: {
    interface: "OrderingStore",
    verbs: ["listHeldKeys", "skipHeldKey", "countWaiting"],
    code: "ORDERING_UNSUPPORTED",
  },
  replay: {
    interface: "ReplayStore",
    verbs: ["findReplayable", "resetDeliveries"],
    code: "REPLAY_UNSUPPORTED",
  },
  retention: {
    interface: "RetentionStore",
    verbs: ["pruneFinished", "pruneHealth"],
    code: "RETENTION_UNSUPPORTED",
  },
  auditLog: {
    interface: "AuditLogStore",
    verbs: ["appendAuditEntry", "listAuditEntries", "countAuditEntries", "pruneAuditEntries"],
    code: "AUDIT_LOG_UNSUPPORTED",
  },
  credentials: {
    interface: "CredentialStore",
    verbs: ["rewriteCredentials"],
    code: "CREDENTIAL_REWRITE_UNSUPPORTED",
  },
};

/** The optional capabilities, in the order `CAPABILITIES` lists them. */
export const STORAGE_CAPABILITIES = Object.keys(CAPABILITIES) as StorageCapability[];

/**
 * What is wrong with a storage's shape, checked once at `Postel()`: a verb of the delivery part that
 * is not a function, or a capability that is present but not whole. A verb of a capability found on
 * the storage itself (the flat shape of Postel before capabilities) is named with where it belongs.
 */
export function storageShapeIssues(storage: unknown, path = "storage"): ConfigurationIssue[] {
  if (typeof storage !== "object" || storage === null) {
    return [
      {
        path,
        message: "must be a storage: InMemoryStorage(), PostgresStorage(...), SqliteStorage(...) or your own",
      },
    ];
  }
  const record = storage as Record<string, unknown>;
  const issues: ConfigurationIssue[] = [];
  if (typeof record["name"] !== "string") {
    issues.push({
      path: `${path}.name`,
      message: 'must be a short name for logs and errors, e.g. "postgres"',
    });
  }
  for (const verb of DELIVERY_VERBS) {
    if (typeof record[verb] !== "function") {
      issues.push({
        path: `${path}.${verb}`,
        message: "missing: every storage implements the delivery part (DeliveryStorage)",
      });
    }
  }
  for (const name of STORAGE_CAPABILITIES) {
    const { interface: type, verbs } = CAPABILITIES[name];
    const capability = record[name];
    if (capability === undefined) {
      const flat = verbs.filter((verb) => typeof record[verb] === "function");
      if (flat.length > 0) {
        issues.push({
          path: `${path}.${flat[0]}`,
          message: `belongs to the ${name} capability: expose the ${type} verbs (${verbs.join(", ")}) as storage.${name}`,
        });
      }
      continue;
    }
    if (typeof capability !== "object" || capability === null) {
      issues.push({ path: `${path}.${name}`, message: `must be a ${type} object, or absent` });
      continue;
    }
    for (const verb of verbs) {
      if (typeof (capability as Record<string, unknown>)[verb] !== "function") {
        issues.push({
          path: `${path}.${name}.${verb}`,
          message: `missing: a ${name} capability implements all of ${type}`,
        });
      }
    }
  }
  return issues;
}

/**
 * The storage's `name` capability, or a `CapabilityUnsupportedError` that names it, what `feature`
 * needs it for, and how to get it.
 */
export function requireCapability<Tx, C extends StorageCapability>(
  storage: StorageCapabilities<Tx> & { readonly name: string },
  name: C,
  feature: string,
): NonNullable<StorageCapabilities<Tx>[C]> {
  const capability = storage[name];
  if (capability !== undefined) return capability as NonNullable<StorageCapabilities<Tx>[C]>;
  const { interface: type, code } = CAPABILITIES[name];
  throw new CapabilityUnsupportedError(
    code,
    name,
    `${feature} needs the storage's ${name} capability, and the ${storage.name} storage has none. ` +
      "InMemoryStorage, PostgresStorage (@postel/storage-postgres) and SqliteStorage (@postel/storage-sqlite) have it; " +
      `a storage of your own adds it by implementing ${type} as storage.${name} (runStorageConformance checks it).`,
  );
}
