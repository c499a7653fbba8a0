import { runAdapterConformance } from "@postel/core/testing";
import { Hono } from "hono";
import { webhook } from "../src/index.js";
import { listen } from "./serve.js";

// On @hono/node-server the gate reads each copy of a repeated header from the Node request in the
// env (`c.env.incoming`). Without the env, as on Bun, Deno or Workers, it has only fetch Headers.
for (const nodeRequest of [true, false]) {
  runAdapterConformance({
    name: nodeRequest ? "hono (@hono/node-server)" : "hono (fetch Request only, as off Node)",
    fetchHeadersOnly: !nodeRequest,
    mount: async (receiver, source, handler, { preParsed }) => {
      const app = new Hono();
      if (preParsed) {
        // A body-reading middleware mounted before the gate, as a JSON validator would be.
        app.use("/webhooks", async (c, next) => {
          await c.req.json();
          await next();
        });
      }
      app.post("/webhooks", webhook(receiver, source, handler, { onError: () => {} }));
      return listen({
        fetch: (request, env) => (nodeRequest ? app.fetch(request, env) : app.fetch(request)),
      });
    },
  });
}
