import { isIP } from "node:net";

// Ranges that are not reachable on the public internet (IANA special-purpose registries, RFC 6890).
// A webhook sent to any of them could reach the sender's own network (SSRF), so they are refused
// unless the caller opts in to private networks.
const NON_PUBLIC_V4 = [
  "0.0.0.0/8", // "this network"
  "10.0.0.0/8", // private
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local, incl. cloud metadata 169.254.169.254
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // TEST-NET-1
  "192.88.99.0/24", // 6to4 relay anycast (deprecated)
  "192.168.0.0/16", // private
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // TEST-NET-2
  "203.0.113.0/24", // TEST-NET-3
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, incl. broadcast 255.255.255.255
].map((cidr) => parseCidr(cidr, 32, ipv4ToBigInt));

// IPv6 is judged by allow-list: only global unicast (2000::/3) is public. That one rule excludes
// ::, ::1, ULA fc00::/7, link-local fe80::/10, multicast ff00::/8 and every unassigned block.
const GLOBAL_UNICAST = parseCidr("2000::/3", 128, ipv6ToBigInt);
const NON_PUBLIC_V6 = [
  "2001::/32", // Teredo tunnelling
  "2001:2::/48", // benchmarking
  "2001:10::/28", // ORCHID (deprecated)
  "2001:db8::/32", // documentation
  "3fff::/20", // documentation (RFC 9637)
].map((cidr) => parseCidr(cidr, 128, ipv6ToBigInt));

// Forms that carry an IPv4 address: the verdict is the embedded address's verdict.
const IPV4_MAPPED = parseCidr("::ffff:0:0/96", 128, ipv6ToBigInt);
const NAT64 = parseCidr("64:ff9b::/96", 128, ipv6ToBigInt);
const SIX_TO_FOUR = parseCidr("2002::/16", 128, ipv6ToBigInt);

/**
 * True when `ip` is a literal IPv4 or IPv6 address routable on the public internet; false for
 * private, loopback, link-local, multicast, documentation and other reserved ranges, and for
 * anything that is not an IP literal. Embedded IPv4 (`::ffff:a.b.c.d`, NAT64, 6to4) is judged by
 * the IPv4 address it carries.
 * @example isPublicAddress("169.254.169.254") // false
 */
export function isPublicAddress(ip: string): boolean {
  const address = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const version = isIP(address);
  if (version === 4) return isPublicV4(ipv4ToBigInt(address));
  if (version !== 6) return false;
  const value = ipv6ToBigInt(address.replace(/%.*$/, ""));
  if (IPV4_MAPPED.contains(value) || NAT64.contains(value)) return isPublicV4(value & 0xffffffffn);
  if (SIX_TO_FOUR.contains(value)) return isPublicV4((value >> 80n) & 0xffffffffn);
  return GLOBAL_UNICAST.contains(value) && !NON_PUBLIC_V6.some((range) => range.contains(value));
}

function isPublicV4(value: bigint): boolean {
  return !NON_PUBLIC_V4.some((range) => range.contains(value));
}

interface Range {
  contains(value: bigint): boolean;
}

function parseCidr(cidr: string, bits: number, toBigInt: (address: string) => bigint): Range {
  const [address = "", prefix = ""] = cidr.split("/");
  const shift = BigInt(bits - Number(prefix));
  const network = toBigInt(address) >> shift;
  return { contains: (value) => value >> shift === network };
}

function ipv4ToBigInt(address: string): bigint {
  return address.split(".").reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

/** Expects a valid IPv6 literal without zone id, e.g. `fe80::1`, `::ffff:10.0.0.1`. */
function ipv6ToBigInt(address: string): bigint {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const v4 = ipv4ToBigInt(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(missing).fill("0"), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}
