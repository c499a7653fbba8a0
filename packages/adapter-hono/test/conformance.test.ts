import { runAdapterConformance } from "@postel/core/testing";
import { Hono } from "hono";
import { webhook } from "../src/index.js";
import { listen } from "./serve.js";

runAdapterConformance({
  name: "hono (@hono/node-server)",
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
    return listen(app);
  },
});
