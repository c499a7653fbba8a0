import type { LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { buildConnector } from "undici";
import { type LookupFn, type NetworkPolicy, privateAddressMessage } from "./network-policy.js";
import { isPublicAddress } from "./ip-ranges.js";

/** Marks a connection refused by the network policy; `mapHttpError` turns it into `PRIVATE_ADDRESS`. */
export class PrivateAddressRefusedError extends Error {
  /** Stable code the error mapper recognises. */
  readonly code = "PRIVATE_ADDRESS_NOT_ALLOWED";

  constructor(host: string, address: string) {
    super(privateAddressMessage(host, address));
    this.name = "PrivateAddressRefusedError";
  }
}

/** What the guarded connector needs: the policy, the resolver and the TCP/TLS connect timeout. */
export interface GuardedConnectorOptions {
  networkPolicy: NetworkPolicy;
  lookup: LookupFn;
  connectTimeoutMs: number;
}

/**
 * An undici connector that checks the address it is about to connect to, after DNS resolution and
 * inside the connection path, so a hostname that re-resolves to a private address (DNS rebinding)
 * is refused even though it passed `assertEndpointUrlAllowed` earlier.
 */
export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const { networkPolicy, lookup } = options;
  const connect = buildConnector({
    timeout: options.connectTimeoutMs,
    lookup: guardedLookup(lookup, networkPolicy),
  });
  return (connectOptions, callback) => {
    // net.connect skips `lookup` for IP literals, so they are checked here instead.
    const host = connectOptions.hostname;
    if (!networkPolicy.allowPrivateNetworks && isIP(host) !== 0 && !isPublicAddress(host)) {
      callback(new PrivateAddressRefusedError(host, host), null);
      return;
    }
    connect(connectOptions, callback);
  };
}

/** Adapts a promise-returning `LookupFn` to `net.connect`'s callback `lookup`, refusing private results. */
function guardedLookup(lookup: LookupFn, policy: NetworkPolicy): LookupFunction {
  return (hostname, dnsOptions, callback) => {
    lookup(hostname).then(
      (resolved) => {
        const addresses: LookupAddress[] = resolved.map(({ address, family }) => ({ address, family }));
        const first = addresses[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`No address found for ${hostname}`), { code: "ENOTFOUND" }), "");
          return;
        }
        const blocked = policy.allowPrivateNetworks
          ? undefined
          : addresses.find((entry) => !isPublicAddress(entry.address));
        if (blocked !== undefined) {
          callback(new PrivateAddressRefusedError(hostname, blocked.address), "");
        } else if (dnsOptions.all === true) {
          callback(null, addresses);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: unknown) => {
        const failure = error instanceof Error ? error : new Error(`DNS lookup failed for ${hostname}`);
        callback(failure, "");
      },
    );
  };
}
