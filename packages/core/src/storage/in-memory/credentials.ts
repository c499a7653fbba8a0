import type { CredentialStore, StoredCredentials } from "../credentials-store.js";
import type { EndpointRecord } from "../records.js";
import type { MemoryState } from "./state.js";

/** `InMemoryStorage`'s credential rewrites: compare and set within one synchronous step. */
export function memoryCredentials(state: MemoryState): CredentialStore {
  return {
    async rewriteCredentials(id, expected, next) {
      const endpoint = state.liveEndpoint(id)?.record;
      if (!endpoint || !holds(endpoint, expected)) return false;
      endpoint.headers = { ...next.headers };
      endpoint.secrets.forEach((secret, i) => {
        secret.secret = next.secrets[i]!;
      });
      return true;
    },
  };
}

/** Whether the endpoint's stored credentials are exactly `expected` (header names in any order). */
function holds(endpoint: EndpointRecord, expected: StoredCredentials): boolean {
  const names = Object.keys(endpoint.headers);
  return (
    names.length === Object.keys(expected.headers).length &&
    names.every(
      (name) => Object.hasOwn(expected.headers, name) && expected.headers[name] === endpoint.headers[name],
    ) &&
    endpoint.secrets.length === expected.secrets.length &&
    endpoint.secrets.every((s, i) => s.secret === expected.secrets[i])
  );
}
