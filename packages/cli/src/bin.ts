#!/usr/bin/env node
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { main } from "./main.js";

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

// `postel messages list | head -1`: once the reader is gone there is nobody left to write for, so
// stop at once and quietly, as `git log | head` does. A closed stderr only loses the notes.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});
process.stderr.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

// postgres.js can reject a promise nobody holds (its type lookup on a new connection, when that
// query times out): the command's own query fails with the same cause and is reported, so the
// stray copy must not end the process with a stack trace instead.
process.on("unhandledRejection", () => {});

// Ctrl-C (or SIGTERM) stops `tail` cleanly; other commands finish what they were doing.
const interrupted = new Promise<void>((resolve) => {
  process.once("SIGINT", () => resolve());
  process.once("SIGTERM", () => resolve());
});

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  version,
  interrupted,
  readLine: () =>
    new Promise((resolve) => {
      const lines = createInterface({ input: process.stdin });
      lines.once("line", (line) => {
        lines.close();
        resolve(line);
      });
      lines.once("close", () => resolve(null));
    }),
}).then((code) => {
  process.exitCode = code;
  // Nothing else should keep the process alive once the command is done (the signal listeners).
  process.removeAllListeners("SIGINT");
  process.removeAllListeners("SIGTERM");
});
