import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../errors.js";
import { assertEndpointUrlAllowed, type LookupFn } from "./network-policy.js";

const strict = { allowPrivateNetworks: false };
const permissive = { allowPrivateNetworks: true };

function resolvesTo(...addresses: string[]): LookupFn {
  return async () =>
    addresses.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 }));
}
const publicDns = resolvesTo("93.184.216.34");
const failingDns: LookupFn = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
};

async function rejectionCode(url: string, policy = strict, lookup: LookupFn = publicDns): Promise<string> {
  const error: unknown = await assertEndpointUrlAllowed(url, policy, lookup).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof InvalidInputError))
    throw new Error(`expected ${url} to be rejected, got ${String(error)}`);
  return error.code;
}

describe("assertEndpointUrlAllowed rejects", () => {
  it.each([
    ["not a url", "INVALID_URL"],
    ["/relative/path", "INVALID_URL"],
    ["ftp://example.com/hook", "INVALID_URL"],
    ["javascript:alert(1)", "INVALID_URL"],
    ["file:///etc/passwd", "INVALID_URL"],
    ["https://user:secret@example.com/hook", "INVALID_URL"],
    ["https://user@example.com/hook", "INVALID_URL"],
    ["http://127.0.0.1:3000/hook", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://0x7f000001/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://2130706433/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://0177.0.0.1/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://127.1/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://169.254.169.254/latest/meta-data/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://10.0.0.5/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://[::1]/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://[::ffff:127.0.0.1]/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://[fd00::1]:8080/", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://localhost:3000", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://LOCALHOST./", "PRIVATE_ADDRESS_NOT_ALLOWED"],
    ["http://foo.localhost", "PRIVATE_ADDRESS_NOT_ALLOWED"],
  ])("%s with %s", async (url, code) => {
    expect(await rejectionCode(url)).toBe(code);
  });

  it.each([["10.0.0.5"], ["169.254.169.254"], ["::1"]])("a hostname that resolves to %s", async (address) => {
    expect(await rejectionCode("https://hooks.example.com/", strict, resolvesTo(address))).toBe(
      "PRIVATE_ADDRESS_NOT_ALLOWED",
    );
  });

  it("a hostname with one private address among public ones", async () => {
    const mixed = resolvesTo("93.184.216.34", "2606:4700::1111", "192.168.0.10");
    expect(await rejectionCode("https://hooks.example.com/", strict, mixed)).toBe(
      "PRIVATE_ADDRESS_NOT_ALLOWED",
    );
  });

  it("explains how to allow private networks", async () => {
    await expect(assertEndpointUrlAllowed("http://localhost:3000", strict)).rejects.toThrow(
      "outbound: { http: { allowPrivateNetworks: true } }",
    );
  });

  it("an invalid URL even when private networks are allowed", async () => {
    expect(await rejectionCode("ftp://localhost/", permissive)).toBe("INVALID_URL");
  });
});

describe("assertEndpointUrlAllowed accepts", () => {
  it("a public https URL and returns it parsed", async () => {
    const url = await assertEndpointUrlAllowed("https://hooks.example.com/in?x=1", strict, publicDns);
    expect(url.href).toBe("https://hooks.example.com/in?x=1");
  });

  it("a public IP literal without asking DNS", async () => {
    const neverCalled: LookupFn = async () => {
      throw new Error("lookup must not run for an IP literal");
    };
    await expect(
      assertEndpointUrlAllowed("http://93.184.216.34:8080/", strict, neverCalled),
    ).resolves.toBeInstanceOf(URL);
  });

  it("a hostname whose DNS does not resolve yet (checked again at connect time)", async () => {
    const url = await assertEndpointUrlAllowed("https://not-yet.example.com/", strict, failingDns);
    expect(url.hostname).toBe("not-yet.example.com");
  });

  it.each([["http://localhost:3000/hook"], ["http://127.0.0.1:3000/hook"], ["http://[::1]:3000/hook"]])(
    "%s when private networks are allowed",
    async (url) => {
      await expect(
        assertEndpointUrlAllowed(url, permissive, resolvesTo("127.0.0.1")),
      ).resolves.toBeInstanceOf(URL);
    },
  );
});
