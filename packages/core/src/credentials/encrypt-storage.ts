import type { EndpointQuery, EndpointStore, OperationsStore, Storage } from "../storage/storage.js";
import type { CredentialCodec } from "./credential-codec.js";

type EndpointVerbs = Pick<
  EndpointStore,
  "createEndpoint" | "getEndpoint" | "allEndpoints" | "updateEndpoint" | "addEndpointSecret"
>;

/**
 * The storage as the rest of core sees it: endpoint writes store credentials in their stored form
 * (encrypted with the primary key), endpoint reads return them decrypted, every other verb is the
 * storage's own. So the engine, the operations API, the portal and the dashboard see plain text, and
 * the database sees only ciphertext. An endpoint whose credentials cannot be decrypted is read
 * without them and with the reason attached (`unreadableReason`); reads never throw for it.
 */
export function encryptCredentials<S extends Storage<unknown>>(storage: S, codec: CredentialCodec): S {
  const openAll = async (records: Awaited<ReturnType<EndpointStore["allEndpoints"]>>) =>
    Promise.all(records.map((record) => codec.openRecord(record)));
  const verbs: EndpointVerbs = {
    createEndpoint: async (endpoint) => storage.createEndpoint(await codec.sealRecord(endpoint)),
    getEndpoint: async (id) => {
      const record = await storage.getEndpoint(id);
      return record === null ? null : codec.openRecord(record);
    },
    allEndpoints: async () => openAll(await storage.allEndpoints()),
    updateEndpoint: async (id, fields, now) => {
      const stored =
        fields.headers === undefined
          ? fields
          : { ...fields, headers: await codec.sealHeaders(id, fields.headers) };
      const record = await storage.updateEndpoint(id, stored, now);
      return record === null ? null : codec.openRecord(record);
    },
    addEndpointSecret: async (id, secret, previousExpireAt) =>
      storage.addEndpointSecret(id, await codec.sealSecret(id, secret), previousExpireAt),
  };
  // The storage's own methods run on the storage itself (a class with private fields keeps working).
  // Bound once per function, so a method replaced on the storage later is the one called.
  const bound = new WeakMap<object, unknown>();
  // The operations capability lists endpoints: its pages are opened too.
  const ops = storage.operations;
  const operations: OperationsStore | undefined =
    ops === undefined
      ? undefined
      : new Proxy(ops, {
          get(target, key) {
            if (key === "listEndpoints")
              return async (query: EndpointQuery) => openAll(await target.listEndpoints(query));
            const value: unknown = Reflect.get(target, key, target);
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
  return new Proxy(storage, {
    get(target, key) {
      if (Object.hasOwn(verbs, key)) return verbs[key as keyof EndpointVerbs];
      if (key === "operations") return operations;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      let method = bound.get(value);
      if (method === undefined) {
        method = value.bind(target);
        bound.set(value, method);
      }
      return method;
    },
  });
}
