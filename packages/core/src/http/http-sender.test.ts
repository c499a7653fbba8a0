import { afterEach, describe, expect, it } from "vitest";
import type { HttpOutcome } from "../classify-response.js";
import type { HttpSender } from "./http-sender.js";
import { closedPort, type LocalServer, startLocalServer, testSender } from "./local-server.test-helper.js";

const json = new TextEncoder().encode('{"type":"order.created"}');
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function track<T extends LocalServer | HttpSender>(resource: T): T {
  cleanups.push(() => resource.close());
  return resource;
}

function expectResponse(outcome: HttpOutcome): Extract<HttpOutcome, { kind: "response" }> {
  if (outcome.kind !== "response")
    throw new Error(`expected a response, got ${outcome.code}: ${outcome.message}`);
  return outcome;
}

function expectError(outcome: HttpOutcome): Extract<HttpOutcome, { kind: "error" }> {
  if (outcome.kind !== "error") throw new Error(`expected an error, got status ${outcome.status}`);
  return outcome;
}

describe("createHttpSender responses", () => {
  it("returns the status, lower-cased headers (first value of repeats) and the body", async () => {
    const server = track(
      await startLocalServer((_request, response) => {
        response.setHeader("X-Receiver", "yes");
        response.setHeader("Set-Cookie", ["a=1", "b=2"]);
        response.end("received ✓");
      }),
    );
    const outcome = expectResponse(await track(testSender()).post(`${server.origin}/hook`, {}, json));
    expect(outcome.status).toBe(200);
    expect(outcome.bodySnippet).toBe("received ✓");
    expect(outcome.headers["x-receiver"]).toBe("yes");
    expect(outcome.headers["set-cookie"]).toBe("a=1");
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("returns a 500 as a response, not an error", async () => {
    const server = track(
      await startLocalServer((_request, response) => {
        response.statusCode = 500;
        response.end("database down");
      }),
    );
    const outcome = expectResponse(await track(testSender()).post(server.origin, {}, json));
    expect(outcome).toMatchObject({ status: 500, bodySnippet: "database down" });
  });

  it("does not follow a 301: the Location target sees no request", async () => {
    const target = track(await startLocalServer((_request, response) => response.end("moved here")));
    const server = track(
      await startLocalServer((_request, response) => {
        response.writeHead(301, { Location: `${target.origin}/new` }).end();
      }),
    );
    const outcome = expectResponse(await track(testSender()).post(server.origin, {}, json));
    expect(outcome.status).toBe(301);
    expect(outcome.headers["location"]).toBe(`${target.origin}/new`);
    expect(target.connections).toBe(0);
  });

  it("sends exactly the given bytes, the custom headers and the default user-agent and content-type", async () => {
    const server = track(await startLocalServer((_request, response) => response.end()));
    const body = new Uint8Array([0x7b, 0x00, 0xff, 0xfe, 0x22, 0xe2, 0x9c, 0x93, 0x7d]);
    const headers = { "Webhook-Id": "msg_1", "x-tenant": "acme" };
    expectResponse(await track(testSender()).post(`${server.origin}/in?x=1`, headers, body));
    const [received] = server.requests;
    expect(received?.method).toBe("POST");
    expect(received?.url).toBe("/in?x=1");
    expect(new Uint8Array(received?.body ?? [])).toEqual(body);
    expect(received?.headers).toMatchObject({
      "webhook-id": "msg_1",
      "x-tenant": "acme",
      "user-agent": "postel-test/1",
      "content-type": "application/json",
      "content-length": String(body.byteLength),
    });
  });

  it("lets the caller's content-type and user-agent win over the defaults, whatever their case", async () => {
    const server = track(await startLocalServer((_request, response) => response.end()));
    const headers = { "Content-Type": "application/cloudevents+json", "User-Agent": "custom/2" };
    expectResponse(await track(testSender()).post(server.origin, headers, json));
    expect(server.requests[0]?.headers["content-type"]).toBe("application/cloudevents+json");
    expect(server.requests[0]?.headers["user-agent"]).toBe("custom/2");
  });

  it("takes flat [name, value] pairs too: defaults added unless the pairs set them", async () => {
    const server = track(await startLocalServer((_request, response) => response.end()));
    const sender = track(testSender());
    expectResponse(await sender.post(server.origin, ["webhook-id", "msg_2", "x-tenant", "acme"], json));
    expectResponse(
      await sender.post(server.origin, ["user-agent", "custom/3", "content-type", "text/plain"], json),
    );
    expect(server.requests[0]?.headers).toMatchObject({
      "webhook-id": "msg_2",
      "x-tenant": "acme",
      "user-agent": "postel-test/1",
      "content-type": "application/json",
    });
    expect(server.requests[1]?.headers["user-agent"]).toBe("custom/3");
    expect(server.requests[1]?.headers["content-type"]).toBe("text/plain");
    expect(server.requests[1]?.rawHeaders.filter((name) => name.toLowerCase() === "user-agent")).toHaveLength(
      1,
    );
  });

  it("reuses keep-alive connections: 100 sequential posts open at most 2 sockets", async () => {
    const server = track(await startLocalServer((_request, response) => response.end("ok")));
    const sender = track(testSender());
    for (let index = 0; index < 100; index += 1) {
      expectResponse(await sender.post(server.origin, {}, json));
    }
    expect(server.requests).toHaveLength(100);
    expect(server.connections).toBeLessThanOrEqual(2);
  });

  it("cuts off an endless body quickly and returns the status with a 4 KiB snippet", async () => {
    const fiftyMegabytes = 50 * 1024 * 1024;
    let written = 0;
    const server = track(
      await startLocalServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" });
        const chunk = Buffer.alloc(64 * 1024, "a");
        const pump = () => {
          while (written < fiftyMegabytes && !response.destroyed) {
            written += chunk.length;
            if (!response.write(chunk)) return void response.once("drain", pump);
          }
          response.end();
        };
        pump();
      }),
    );
    const sender = track(testSender({ timeoutMs: 10_000 }));
    const outcome = expectResponse(await sender.post(server.origin, {}, json));
    expect(outcome.status).toBe(200);
    expect(outcome.bodySnippet).toBe("a".repeat(4096));
    expect(outcome.latencyMs).toBeLessThan(2_000);
    expect(written).toBeLessThan(fiftyMegabytes);
  });
});

describe("createHttpSender failures are values", () => {
  it("times out within timeoutMs when the server accepts and never answers", async () => {
    const server = track(await startLocalServer(() => {}));
    const outcome = expectError(await track(testSender({ timeoutMs: 300 })).post(server.origin, {}, json));
    expect(outcome.code).toBe("TIMEOUT");
    expect(outcome.message).toContain("300 ms");
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(250);
    expect(outcome.latencyMs).toBeLessThan(1_500);
    expect(server.requests).toHaveLength(1);
  });

  it("reports CONNECTION_RESET when the server destroys the socket mid-request", async () => {
    const server = track(await startLocalServer((request) => request.socket.destroy()));
    const outcome = expectError(await track(testSender()).post(server.origin, {}, json));
    expect(outcome.code).toBe("CONNECTION_RESET");
  });

  it("reports CONNECTION_REFUSED for a closed port", async () => {
    const port = await closedPort();
    const outcome = expectError(await track(testSender()).post(`http://127.0.0.1:${port}/`, {}, json));
    expect(outcome.code).toBe("CONNECTION_REFUSED");
    expect(outcome.message).toContain("ECONNREFUSED");
  });

  it("reports TLS_ERROR when https meets a server that does not speak TLS", async () => {
    const server = track(await startLocalServer((_request, response) => response.end()));
    const outcome = expectError(
      await track(testSender()).post(`https://127.0.0.1:${server.port}/`, {}, json),
    );
    expect(outcome.code).toBe("TLS_ERROR");
  });

  it("reports DNS_FAILURE when the hostname does not resolve", async () => {
    const lookup = async (hostname: string) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    };
    const outcome = expectError(
      await track(testSender({ lookup })).post("http://nowhere.invalid/", {}, json),
    );
    expect(outcome.code).toBe("DNS_FAILURE");
    expect(outcome.message).toContain("nowhere.invalid");
  });

  it("reports NETWORK_ERROR for a URL it cannot send to, without throwing", async () => {
    const outcome = expectError(await track(testSender()).post("not a url", {}, json));
    expect(outcome.code).toBe("NETWORK_ERROR");
  });
});
