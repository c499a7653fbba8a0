import { runAdapterConformance } from "@postel/core/testing";
import express from "express";
import { webhook } from "../src/index.js";
import { listen } from "./listen.js";

// The shared suite against a real Express 5 app on a real http.Server. `preParsed` mounts the
// gate behind the app-wide `express.json()`, the mistake the adapter must report loudly.
runAdapterConformance({
  name: "express",
  async mount(receiver, source, handler, { preParsed }) {
    const app = express();
    // As in production: Express's default error handler stays quiet only when env is "test", so a
    // client aborting mid-body would print a stack trace here if the adapter passed it on.
    app.set("env", "production");
    if (preParsed) app.use(express.json());
    app.post("/webhooks", webhook(receiver, source, handler));
    return listen(app);
  },
});
