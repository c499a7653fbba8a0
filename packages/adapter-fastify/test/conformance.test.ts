import { runAdapterConformance } from "@postel/core/testing";
import Fastify from "fastify";
import { postelWebhooks, webhookHandler } from "../src/index.js";
import { listen } from "./listen.js";

// The shared suite against a real Fastify 5 listener. `preParsed` mounts the handler on a plain
// route, where the app's default JSON parser reads the body first: the mistake to report loudly.
runAdapterConformance({
  name: "fastify",
  async mount(receiver, source, handler, { preParsed }) {
    const app = Fastify();
    if (preParsed) app.post("/webhooks", webhookHandler(receiver, source, handler));
    else app.register(postelWebhooks(receiver), { routes: [{ url: "/webhooks", source, handler }] });
    return listen(app);
  },
});
