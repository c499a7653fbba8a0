import { webhookRoute } from "@postel/adapter-next";
import { github } from "@postel/signing";
import { InMemoryDedupStore, Receiver } from "@postel/signing/inbound";
import { GITHUB_SECRET, PUBLIC_KEY, SECRET } from "./keys.js";

/**
 * One receiver per runtime instance, as an app would have: Standard Webhooks with a secret and with an
 * Ed25519 public key (v1a), and GitHub's scheme; each deduplicated in memory.
 */
export function gate() {
  const receiver = Receiver({
    sources: {
      billing: { verify: SECRET, dedup: InMemoryDedupStore() },
      signed: { verify: PUBLIC_KEY, dedup: InMemoryDedupStore() },
      github: { verify: github({ secret: GITHUB_SECRET }), dedup: InMemoryDedupStore() },
    },
  });
  /** What the handlers ran with, per source: read back with GET. */
  const seen = [];
  const routes = Object.fromEntries(
    receiver.sources.map((source) => [
      source,
      webhookRoute(receiver, source, (event) => {
        seen.push({ source, id: event.id, payload: event.payload });
      }),
    ]),
  );
  return {
    /** Answers POST /…/<source> with the gate, GET with what the handlers saw. */
    async handle(request, source) {
      if (request.method === "GET") return Response.json({ runtime: runtimeName(), seen });
      const route = routes[source];
      if (!route) return Response.json({ error: `no source ${source}` }, { status: 404 });
      return route(request);
    },
  };
}

function runtimeName() {
  return typeof globalThis.EdgeRuntime === "string" ? "edge" : "nodejs";
}
