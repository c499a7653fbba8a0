import { describe, expect, it } from "vitest";
import { isPublicAddress } from "./ip-ranges.js";

const rows: ReadonlyArray<readonly [address: string, isPublic: boolean, why: string]> = [
  // IPv4 public
  ["8.8.8.8", true, "a public resolver"],
  ["93.184.216.34", true, "a public web host"],
  ["1.1.1.1", true, "a public anycast address"],
  ["172.15.255.255", true, "just below 172.16/12"],
  ["172.32.0.0", true, "just above 172.16/12"],
  ["100.63.255.255", true, "just below CGNAT"],
  ["100.128.0.0", true, "just above CGNAT"],
  ["192.0.1.1", true, "between 192.0.0/24 and 192.0.2/24"],
  ["198.17.255.255", true, "just below benchmarking 198.18/15"],
  ["198.20.0.0", true, "just above benchmarking 198.18/15"],
  ["223.255.255.255", true, "the last unicast address before multicast"],
  ["11.0.0.0", true, "just above 10/8"],
  // IPv4 non-public
  ["0.0.0.0", false, "this network"],
  ["0.255.255.255", false, "the end of 0/8"],
  ["10.0.0.5", false, "private 10/8"],
  ["100.64.0.0", false, "CGNAT start"],
  ["100.127.255.255", false, "CGNAT end"],
  ["127.0.0.1", false, "loopback"],
  ["127.255.255.254", false, "loopback, far end"],
  ["169.254.169.254", false, "cloud metadata"],
  ["172.16.0.0", false, "172.16/12 start"],
  ["172.31.255.255", false, "172.16/12 end"],
  ["192.0.0.8", false, "IETF protocol assignments"],
  ["192.0.2.1", false, "TEST-NET-1"],
  ["192.88.99.1", false, "6to4 relay anycast"],
  ["192.168.1.1", false, "private 192.168/16"],
  ["198.18.0.1", false, "benchmarking"],
  ["198.19.255.255", false, "benchmarking end"],
  ["198.51.100.7", false, "TEST-NET-2"],
  ["203.0.113.9", false, "TEST-NET-3"],
  ["224.0.0.1", false, "multicast"],
  ["239.255.255.255", false, "multicast end"],
  ["240.0.0.1", false, "reserved 240/4"],
  ["255.255.255.255", false, "broadcast"],
  // IPv6 public
  ["2606:4700::1111", true, "a public resolver"],
  ["2001:4860:4860::8888", true, "a public resolver"],
  ["2a00:1450:4001::200e", true, "global unicast"],
  ["[2606:4700::1111]", true, "bracketed as in a URL"],
  ["::ffff:8.8.8.8", true, "IPv4-mapped public"],
  ["64:ff9b::808:808", true, "NAT64 of 8.8.8.8"],
  ["2002:808:808::1", true, "6to4 of 8.8.8.8"],
  // IPv6 non-public
  ["::", false, "unspecified"],
  ["::1", false, "loopback"],
  ["[::1]", false, "bracketed loopback"],
  ["0:0:0:0:0:0:0:1", false, "loopback, uncompressed"],
  ["fc00::1", false, "unique local"],
  ["fd12:3456:789a::1", false, "unique local fd00::/8"],
  ["fe80::1", false, "link-local"],
  ["fe80::1%eth0", false, "link-local with zone id"],
  ["febf:ffff::1", false, "link-local end"],
  ["ff02::1", false, "multicast"],
  ["2001:db8::1", false, "documentation"],
  ["2001::1", false, "Teredo"],
  ["3fff::1", false, "documentation 3fff::/20"],
  ["::ffff:127.0.0.1", false, "IPv4-mapped loopback"],
  ["::ffff:7f00:1", false, "IPv4-mapped loopback in hex"],
  ["::ffff:169.254.169.254", false, "IPv4-mapped metadata"],
  ["::ffff:a00:5", false, "IPv4-mapped 10.0.0.5 in hex"],
  ["64:ff9b::a00:1", false, "NAT64 of 10.0.0.1"],
  ["64:ff9b::127.0.0.1", false, "NAT64 of loopback, dotted"],
  ["2002:7f00:1::", false, "6to4 of loopback"],
  ["2002:c0a8:101::1", false, "6to4 of 192.168.1.1"],
  ["::127.0.0.1", false, "deprecated IPv4-compatible"],
  // Not addresses at all
  ["localhost", false, "a hostname"],
  ["example.com", false, "a hostname"],
  ["", false, "empty"],
  ["127.1", false, "a shorthand IPv4 that is not a literal"],
];

describe("isPublicAddress", () => {
  it.each(rows)("judges %s public: %s (%s)", (address, isPublic) => {
    expect(isPublicAddress(address)).toBe(isPublic);
  });
});
