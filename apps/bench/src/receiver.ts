import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Behaviour,
  childConfig,
  cpuMs,
  type EndpointStats,
  preciseNow,
  type ReceiverCommand,
  type ReceiverConfig,
  type ReceiverEndpoint,
  type ReceiverReport,
  report,
} from "./protocol.js";

// The webhook receivers: one OS process on 127.0.0.1 serving one or more endpoints, each its own
// keep-alive server on its own port (so its own origin, as separate receivers are to a sender's
// connection pool). By default one endpoint that answers 200 to every POST after reading the body.
// Each endpoint counts requests and, when configured, the distinct webhook-ids and every arrival; when
// asked, the process also records when each webhook-id first arrived anywhere.
const config = childConfig<ReceiverConfig>();
const endpoints: ReceiverEndpoint[] = config.endpoints ?? [{ respond: { kind: "ok" }, record: "count" }];
let recordArrivals = config.recordArrivals;
let count = 0;
let arrivals = new Map<string, number>();

/** What one endpoint has seen since the last reset. */
class Received {
  requests = 0;
  lastNewAt = 0;
  ids = new Set<string>();
  log: [string, number][] = [];

  constructor(readonly recording: ReceiverEndpoint["record"]) {}

  add(id: string | undefined, at: number): void {
    this.requests += 1;
    if (this.recording === "count" || id === undefined) return;
    if (!this.ids.has(id)) {
      this.ids.add(id);
      this.lastNewAt = at;
    }
    if (this.recording === "log") this.log.push([id, at]);
  }

  stats(): EndpointStats {
    return { requests: this.requests, distinct: this.ids.size, lastNewAt: this.lastNewAt };
  }
}

let received = endpoints.map((endpoint) => new Received(endpoint.record));

/** Answers a request whose body has been read, as `behaviour` says. */
function respond(behaviour: Behaviour, response: ServerResponse): void {
  const ok = () => {
    response.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    response.end("ok");
  };
  switch (behaviour.kind) {
    case "ok":
      ok();
      break;
    case "delay": {
      const timer = setTimeout(ok, behaviour.ms);
      response.on("close", () => clearTimeout(timer));
      break;
    }
    case "hang":
      break;
    case "trickle": {
      // No content-length: chunked, so the body never ends until the client hangs up.
      response.writeHead(200, { "content-type": "text/plain" });
      response.flushHeaders();
      const timer = setInterval(() => response.write("."), behaviour.intervalMs);
      response.on("close", () => clearInterval(timer));
      break;
    }
    case "fail":
      response.writeHead(behaviour.status, { "content-type": "text/plain", "content-length": "4" });
      response.end("down");
      break;
  }
}

function serve(endpoint: ReceiverEndpoint, index: number): Server {
  const server = createServer(
    { keepAliveTimeout: 60_000 },
    (request: IncomingMessage, response: ServerResponse) => {
      const at = preciseNow();
      const header = request.headers["webhook-id"];
      const id = typeof header === "string" ? header : undefined;
      if (recordArrivals && id !== undefined && !arrivals.has(id)) arrivals.set(id, at);
      received[index]?.add(id, at);
      request.on("data", () => {});
      request.on("end", () => {
        count += 1;
        respond(endpoint.respond, response);
      });
    },
  );
  server.maxRequestsPerSocket = 0;
  server.headersTimeout = 60_000;
  // Slow and hung answers hold their connection for as long as the client waits: never time them out
  // here. (The listen backlog below lets a sender with high concurrency open a thousand at once.)
  server.requestTimeout = 0;
  return server;
}

process.on("message", (command: ReceiverCommand) => {
  if (command.type === "log") {
    report<ReceiverReport>({ type: "log", endpoints: received.map((r) => r.log) });
    return;
  }
  if (command.type === "reset") {
    count = 0;
    arrivals = new Map();
    received = endpoints.map((endpoint) => new Received(endpoint.record));
    recordArrivals = command.recordArrivals;
  }
  report<ReceiverReport>({
    type: "stats",
    count,
    arrivals: command.type === "stats" ? [...arrivals] : [],
    endpoints: received.map((r) => r.stats()),
    cpuMs: cpuMs(),
  });
});
process.on("disconnect", () => process.exit(0));

const ports = await Promise.all(
  endpoints.map(
    (endpoint, index) =>
      new Promise<number>((resolve) => {
        const server = serve(endpoint, index);
        server.listen({ port: 0, host: "127.0.0.1", backlog: 4_096 }, () =>
          resolve((server.address() as AddressInfo).port),
        );
      }),
  ),
);
report<ReceiverReport>({ type: "ready", port: ports[0] ?? 0, ports });
