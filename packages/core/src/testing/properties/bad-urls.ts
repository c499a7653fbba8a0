import type { Arb, Fc } from "./bad-values.js";

// Every IPv4 range the network policy refuses (see http/ip-ranges.ts), as [first octets, prefix].
const PRIVATE_V4: readonly (readonly [readonly number[], number])[] = [
  [[0], 8],
  [[10], 8],
  [[100, 64], 10],
  [[127], 8],
  [[169, 254], 16],
  [[172, 16], 12],
  [[192, 0, 0], 24],
  [[192, 0, 2], 24],
  [[192, 88, 99], 24],
  [[192, 168], 16],
  [[198, 18], 15],
  [[198, 51, 100], 24],
  [[203, 0, 113], 24],
  [[224], 4],
  [[240], 4],
];

/** A random IPv4 address in a non-public range, as a 32-bit unsigned integer. */
function privateV4(fc: Fc): Arb<number> {
  return fc.tuple(fc.constantFrom(...PRIVATE_V4), fc.nat()).map(([[octets, prefix], random]) => {
    const network = [...octets, 0, 0, 0, 0].slice(0, 4).reduce((value, octet) => value * 256 + octet, 0);
    const hostBits = 2 ** (32 - prefix);
    return network - (network % hostBits) + (random % hostBits);
  });
}

const dotted = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
const hextets = (n: number) => `${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;

/** The spellings of one IPv4 address that WHATWG URL parsing turns back into it, or embeds in IPv6. */
function v4Spellings(n: number): string[] {
  const [a, b, c, d] = dotted(n).split(".").map(Number) as [number, number, number, number];
  return [
    dotted(n),
    String(n),
    `0x${n.toString(16)}`,
    `0${a.toString(8)}.${b}.${c}.${d}`,
    `${a}.${b * 65536 + c * 256 + d}`,
    `[::ffff:${dotted(n)}]`,
    `[::ffff:${hextets(n)}]`,
    `[64:ff9b::${dotted(n)}]`,
    `[2002:${hextets(n)}::1]`,
  ];
}

/** A non-public IPv6 literal: loopback, unspecified, ULA, link-local, multicast, documentation, Teredo. */
function privateV6(fc: Fc): Arb<string> {
  const hextet = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
  return fc.oneof(
    fc.constantFrom("::1", "::", "ff02::1", "fe80::1"),
    fc.tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), hextet).map(([h, t]) => `${h.toString(16)}::${t}`),
    fc.tuple(fc.integer({ min: 0xfe80, max: 0xfebf }), hextet).map(([h, t]) => `${h.toString(16)}::${t}`),
    fc.tuple(hextet, hextet).map(([h, t]) => `2001:db8:${h}::${t}`),
    hextet.map((t) => `2001:0:${t}::1`),
    // Outside 2000::/3 and not a prefix that embeds IPv4 (::/96, ::ffff:0:0/96, 64:ff9b::/96).
    fc
      .tuple(fc.integer({ min: 0x0100, max: 0xffff }), hextet)
      .filter(([h]) => h < 0x2000 || h > 0x3fff)
      .map(([h, t]) => `${h.toString(16)}:${t}::1`),
  );
}

/** An http(s) URL whose host is, or names, a private, loopback, link-local or reserved address. */
export function privateUrls(fc: Fc): Arb<string> {
  const host = fc.oneof(
    fc.tuple(privateV4(fc), fc.nat()).map(([n, pick]) => {
      const spellings = v4Spellings(n);
      return spellings[pick % spellings.length]!;
    }),
    privateV6(fc).map((address) => `[${address}]`),
    fc.constantFrom("localhost", "LOCALHOST", "localhost.", "api.localhost", "a.b.localhost."),
  );
  return fc
    .tuple(
      fc.constantFrom("http", "https", "HTTPS"),
      host,
      fc.constantFrom("", ":80", ":8080", ":443"),
      fc.constantFrom("", "/", "/hooks", "/latest/meta-data?x=1"),
    )
    .map(([scheme, h, port, path]) => `${scheme}://${h}${port}${path}`);
}

/** Text that is not an absolute http(s) URL: relative, another scheme, or unparseable. */
export function notHttpUrls(fc: Fc): Arb<string> {
  const isHttp = (text: string) => {
    try {
      const url = new URL(text);
      return url.protocol === "http:" || url.protocol === "https:";
    } catch {
      return false;
    }
  };
  return fc.oneof(
    fc.constantFrom(
      "/hooks",
      "hooks.example.com/x",
      "//hooks.example.com/x",
      "ftp://hooks.example.com/x",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "data:text/plain,hi",
      "ws://hooks.example.com/socket",
      "mailto:hooks@example.com",
      "http://",
      "https://[::1",
      "http://exa mple.com/",
      "http://a:b:c/",
      "https://%zz/",
      "http://[fe80::1%25eth0]/",
    ),
    fc.string({ minLength: 1, maxLength: 30 }).filter((text) => !isHttp(text)),
  );
}

/** An http(s) URL carrying a username and/or password. */
export function urlsWithCredentials(fc: Fc): Arb<string> {
  return fc
    .tuple(fc.constantFrom("user:pass@", "user@", ":pass@", "a%40b:c@"), fc.constantFrom("http", "https"))
    .map(([credentials, scheme]) => `${scheme}://${credentials}hooks.example.com/x`);
}
