import { Writable } from "node:stream";
import { runAdapterConformance } from "@postel/core/testing";
import Fastify from "fastify";
import { postelWebhooks, webhookHandler } from "../src/index.js";
import { listen } from "./listen.js";

// Fastify's logger at its usual level. What it logs with an error or at warn and above goes to
// console.error, where the suite looks when a client aborts mid-body.
const logger = {
  level: "info",
  stream: new Writable({
    write(chunk, _encoding, done) {
      const entry: { level: number; msg?: string; err?: { message?: string } } = JSON.parse(chunk.toString());
      if (entry.err !== undefined || entry.level >= 40)
        console.error(`[fastify] ${entry.msg}`, entry.err?.message);
      done();
    },
  }),
};

// The shared suite against a real Fastify 5 listener. `preParsed` mounts the handler on a plain
// route, where the app's default JSON parser reads the body first: the mistake to report loudly.
runAdapterConformance({
  name: "fastify",
  async mount(receiver, source, handler, { preParsed }) {
    const app = Fastify({ logger });
    if (preParsed) app.post("/webhooks", webhookHandler(receiver, source, handler));
    else app.register(postelWebhooks(receiver), { routes: [{ url: "/webhooks", source, handler }] });
    return listen(app);
  },
});
