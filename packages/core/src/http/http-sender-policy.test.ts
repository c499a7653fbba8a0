import type { LookupAddress } from "node:dns";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpOutcome } from "../classify-response.js";
import type { HttpSender } from "./http-sender.js";
import { type LocalServer, startLocalServer, testSender } from "./local-server.test-helper.js";
import { assertEndpointUrlAllowed, type LookupFn } from "./network-policy.js";

// Safety: lookups that return a non-loopback address are only used where the policy must refuse the
// connection before it is made, so these tests never send traffic off this machine.

const json = new TextEncoder().encode("{}");
const strict = { allowPrivateNetworks: false };
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function track<T extends LocalServer | HttpSender>(resource: T): T {
  cleanups.push(() => resource.close());
  return resource;
}

/** A lookup that always answers `address` and counts how often it was asked. */
function resolvingTo(address: string): LookupFn & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
  return Object.assign(lookup, { calls });
}

function errorCode(outcome: HttpOutcome): string {
  return outcome.kind === "error" ? outcome.code : `status ${outcome.status}`;
}

async function okServer(): Promise<LocalServer> {
  return track(await startLocalServer((_request, response) => response.end("ok")));
}

describe("the sender's network policy", () => {
  it("refuses http://127.0.0.1 by default and the server sees no connection", async () => {
    const server = await okServer();
    const outcome = await track(testSender({ networkPolicy: strict })).post(server.origin, {}, json);
    expect(errorCode(outcome)).toBe("PRIVATE_ADDRESS");
    expect(outcome.kind === "error" && outcome.message).toContain("allowPrivateNetworks: true");
    expect(server.connections).toBe(0);
  });

  it("refuses a bracketed IPv6 loopback literal", async () => {
    const server = await okServer();
    const outcome = await track(testSender({ networkPolicy: strict })).post(
      `http://[::1]:${server.port}/`,
      {},
      json,
    );
    expect(errorCode(outcome)).toBe("PRIVATE_ADDRESS");
  });

  it("refuses localhost through the system resolver", async () => {
    const server = await okServer();
    const sender = track(testSender({ networkPolicy: strict }));
    const outcome = await sender.post(`http://localhost:${server.port}/`, {}, json);
    expect(errorCode(outcome)).toBe("PRIVATE_ADDRESS");
    expect(server.connections).toBe(0);
  });

  it.each([["10.0.0.5"], ["169.254.169.254"], ["::1"]])(
    "refuses at connect time a hostname that resolves to %s",
    async (address) => {
      const lookup = resolvingTo(address);
      const sender = track(testSender({ networkPolicy: strict, lookup }));
      const outcome = await sender.post("http://hooks.example.com:8080/", {}, json);
      expect(errorCode(outcome)).toBe("PRIVATE_ADDRESS");
      expect(outcome.kind === "error" && outcome.message).toContain(address);
      expect(lookup.calls).toEqual(["hooks.example.com"]);
    },
  );

  it("refuses a hostname that passed validation but re-resolves to loopback (DNS rebinding)", async () => {
    const server = await okServer();
    const url = `http://rebind.example.com:${server.port}/hook`;
    await expect(assertEndpointUrlAllowed(url, strict, resolvingTo("93.184.216.34"))).resolves.toBeInstanceOf(
      URL,
    );

    const rebound = resolvingTo("127.0.0.1");
    const outcome = await track(testSender({ networkPolicy: strict, lookup: rebound })).post(url, {}, json);
    expect(errorCode(outcome)).toBe("PRIVATE_ADDRESS");
    expect(rebound.calls).toEqual(["rebind.example.com"]);
    expect(server.connections).toBe(0);
  });

  it("reaches 127.0.0.1 when private networks are allowed", async () => {
    const server = await okServer();
    const sender = track(testSender({ networkPolicy: { allowPrivateNetworks: true } }));
    const outcome = await sender.post(server.origin, {}, json);
    expect(outcome).toMatchObject({ kind: "response", status: 200, bodySnippet: "ok" });
    expect(server.requests).toHaveLength(1);
  });

  it("connects to the address the injected lookup returns when private networks are allowed", async () => {
    const server = await okServer();
    const lookup = resolvingTo("127.0.0.1");
    const sender = track(testSender({ networkPolicy: { allowPrivateNetworks: true }, lookup }));
    const outcome = await sender.post(`http://receiver.test:${server.port}/in`, {}, json);
    expect(outcome).toMatchObject({ kind: "response", status: 200 });
    expect(lookup.calls).toEqual(["receiver.test"]);
    expect(server.requests[0]?.headers.host).toBe(`receiver.test:${server.port}`);
  });
});
