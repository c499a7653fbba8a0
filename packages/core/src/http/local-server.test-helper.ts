import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { createHttpSender, type HttpSender, type HttpSenderOptions } from "./http-sender.js";

/** A request as the local test server received it, body bytes included. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Names and values as received, alternating (duplicates kept). */
  rawHeaders: string[];
  body: Buffer;
}

/** A node:http server on 127.0.0.1 that records what reached it. */
export interface LocalServer {
  origin: string;
  port: number;
  /** TCP connections accepted so far. */
  readonly connections: number;
  readonly requests: readonly ReceivedRequest[];
  close(): Promise<void>;
}

/** Answers a request once its body has been read completely. */
export type Handler = (request: IncomingMessage, response: ServerResponse, body: Buffer) => void;

/** Starts a server on 127.0.0.1 with an ephemeral port; `close()` also drops open connections. */
export async function startLocalServer(handler: Handler): Promise<LocalServer> {
  let connections = 0;
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      requests.push({
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body,
      });
      handler(request, response, body);
    });
  });
  server.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    get connections() {
      return connections;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port that was just free: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Sender options for tests: short deadlines and private networks allowed unless overridden. */
export function testSender(overrides: Partial<HttpSenderOptions> = {}): HttpSender {
  return createHttpSender({
    timeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    userAgent: "postel-test/1",
    maxResponseBytes: 4_096,
    networkPolicy: { allowPrivateNetworks: true },
    ...overrides,
  });
}
