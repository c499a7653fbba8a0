#!/usr/bin/env node
import { createRequire } from "node:module";
import { main } from "./main.js";

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

// Ctrl-C (or SIGTERM) stops `tail` cleanly; other commands finish what they were doing.
const interrupted = new Promise<void>((resolve) => {
  process.once("SIGINT", () => resolve());
  process.once("SIGTERM", () => resolve());
});

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  version,
  interrupted,
}).then((code) => {
  process.exitCode = code;
  // Nothing else should keep the process alive once the command is done (the signal listeners).
  process.removeAllListeners("SIGINT");
  process.removeAllListeners("SIGTERM");
});
