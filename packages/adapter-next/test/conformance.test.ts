import { runAdapterConformance } from "@postel/core/testing";
import { NextRequest } from "next/server.js";
import { webhookApiRoute, webhookRoute } from "../src/index.js";
import { callRoute, serveApiRoute, serveRoute } from "./mount.js";

const quiet = { onError: () => {} };

// App Router: the route handler with Node's own (undici) Request, then through Next's NextRequest.
// Pre-parsed: other code read the body (request.text()) before handing the request to the route.
for (const [name, toRequest] of [
  ["Request", (url: string, init: RequestInit) => new Request(url, init)],
  [
    "NextRequest",
    (url: string, init: RequestInit) =>
      new NextRequest(url, init as ConstructorParameters<typeof NextRequest>[1]),
  ],
] as const) {
  runAdapterConformance({
    name: `next App Router route handler (${name})`,
    mount: async (receiver, source, handler, { preParsed }) => {
      const route = webhookRoute(receiver, source, handler, quiet);
      return callRoute(async (request) => {
        if (preParsed) await request.text();
        return route(request);
      }, toRequest);
    },
    skip: { "raw-http": "called in process, no socket: the App Router run on http.Server sends raw HTTP" },
  });
}

// App Router as `next start` serves it: a NextRequest built from Node's request, whose fetch Headers
// have already joined the copies of a repeated header (the documented limitation).
runAdapterConformance({
  name: "next App Router route handler (NextRequest adapter on http.Server)",
  fetchHeadersOnly: true,
  mount: async (receiver, source, handler, { preParsed }) => {
    const route = webhookRoute(receiver, source, handler, quiet);
    return serveRoute(async (request) => {
      if (preParsed) await request.text();
      return route(request);
    });
  },
});

// Pages Router: Next's apiResolver on a real http.Server; pre-parsed = the default body parser left on.
runAdapterConformance({
  name: "next Pages Router API route (apiResolver on http.Server)",
  mount: async (receiver, source, handler, { preParsed }) =>
    serveApiRoute(webhookApiRoute(receiver, source, handler, quiet), { api: { bodyParser: preParsed } }),
});
