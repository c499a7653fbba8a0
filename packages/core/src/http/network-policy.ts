import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { InvalidInputError } from "../errors.js";
import { isPublicAddress } from "./ip-ranges.js";

/** Which networks outbound webhooks may reach. Private networks are refused unless allowed. */
export interface NetworkPolicy {
  /** Allow loopback, private, link-local and other non-public addresses (local development, tests). */
  allowPrivateNetworks: boolean;
}

/** Resolves a hostname to every address it has, like `dns.lookup(host, { all: true })`. */
export type LookupFn = (hostname: string) => Promise<readonly LookupAddress[]>;

/** The system resolver (`dns.lookup` with `all: true`), used unless a lookup is injected. */
export const systemLookup: LookupFn = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

const ALLOW_HINT =
  "Use a public URL, or pass `outbound: { http: { allowPrivateNetworks: true } }` for local development and tests.";

/** The message shared by create-time and connect-time refusals, so both tell the same fix. */
export function privateAddressMessage(host: string, address: string): string {
  const target = host === address ? address : `"${host}" (resolves to ${address})`;
  return `Refusing to send webhooks to ${target}: it is a private or reserved address. ${ALLOW_HINT}`;
}

/**
 * Validates an endpoint URL before it is stored: http(s) only, no credentials, and, unless the policy
 * allows private networks, no host that is or resolves to a non-public address. A hostname that does
 * not resolve yet is accepted; the sender checks the address again when it connects.
 * @throws InvalidInputError `INVALID_URL` or `PRIVATE_ADDRESS_NOT_ALLOWED`
 */
export async function assertEndpointUrlAllowed(
  url: string,
  policy: NetworkPolicy,
  lookup: LookupFn = systemLookup,
): Promise<URL> {
  const parsed = parseEndpointUrl(url);
  if (policy.allowPrivateNetworks) return parsed;

  const host = parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (isIP(host) !== 0) {
    if (!isPublicAddress(host)) throw refusal(host, host);
    return parsed;
  }
  const name = host.replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) throw refusal(host, "loopback");

  let addresses: readonly LookupAddress[];
  try {
    addresses = await lookup(host);
  } catch {
    return parsed; // the receiver's DNS may not exist yet
  }
  const blocked = addresses.find((entry) => !isPublicAddress(entry.address));
  if (blocked !== undefined) throw refusal(host, blocked.address);
  return parsed;
}

function parseEndpointUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(
      "INVALID_URL",
      "Endpoint URL is not a valid absolute URL; pass one like `https://example.com/webhooks`.",
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new InvalidInputError(
      "INVALID_URL",
      `Endpoint URL must use http: or https:, not ${parsed.protocol}; pass one like \`https://example.com/webhooks\`.`,
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new InvalidInputError(
      "INVALID_URL",
      "Endpoint URL must not contain a username or password; send credentials in the endpoint's `headers` instead.",
    );
  }
  return parsed;
}

function refusal(host: string, address: string): InvalidInputError {
  return new InvalidInputError("PRIVATE_ADDRESS_NOT_ALLOWED", privateAddressMessage(host, address));
}
