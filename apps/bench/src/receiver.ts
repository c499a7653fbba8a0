import { createServer } from "node:http";
import {
  childConfig,
  cpuMs,
  preciseNow,
  type ReceiverCommand,
  type ReceiverConfig,
  type ReceiverReport,
  report,
} from "./protocol.js";

// The webhook receiver: its own OS process on 127.0.0.1, keep-alive, answers 200 to every POST after
// reading the body. It counts requests and, when asked, records when each webhook-id first arrived.
const config = childConfig<ReceiverConfig>();
let recordArrivals = config.recordArrivals;
let count = 0;
let arrivals = new Map<string, number>();

const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  if (recordArrivals) {
    const id = request.headers["webhook-id"];
    if (typeof id === "string" && !arrivals.has(id)) arrivals.set(id, preciseNow());
  }
  request.on("data", () => {});
  request.on("end", () => {
    count += 1;
    response.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    response.end("ok");
  });
});
server.maxRequestsPerSocket = 0;
server.headersTimeout = 60_000;

process.on("message", (command: ReceiverCommand) => {
  if (command.type === "stats") {
    report<ReceiverReport>({ type: "stats", count, arrivals: [...arrivals], cpuMs: cpuMs() });
  } else {
    count = 0;
    arrivals = new Map();
    recordArrivals = command.recordArrivals;
    report<ReceiverReport>({ type: "stats", count, arrivals: [], cpuMs: cpuMs() });
  }
});
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  report<ReceiverReport>({ type: "ready", port });
});
