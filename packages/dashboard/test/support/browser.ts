import { existsSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { type Browser, chromium } from "playwright-core";
import type { Dashboard } from "../../src/index.js";
import { expressDashboard } from "../../src/mounts/express.js";

/** Debian's Chromium; CI installs it (.ci/run). Override with POSTEL_CHROMIUM. */
export const CHROMIUM = process.env["POSTEL_CHROMIUM"] ?? "/usr/bin/chromium";
/** Screenshots of every page, kept as test artifacts (gitignored). */
export const ARTIFACTS = new URL("../../test-artifacts/", import.meta.url).pathname;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: apt-get install -y chromium (or set POSTEL_CHROMIUM).`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  // --no-sandbox: CI and these machines run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"], headless: true });
}

/** A real Express app on 127.0.0.1 mounting `dashboard` at its basePath. */
export async function serveDashboard(
  dashboard: Dashboard,
): Promise<{ origin: string; close(): Promise<void> }> {
  const app = express();
  app.use(dashboard.basePath, expressDashboard(dashboard));
  return listen(createServer(app));
}

/** A page on another origin (another port: same site, other origin) that auto-posts a form to `action`. */
export async function serveAttacker(action: string, fields: Record<string, string>) {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
    .join("");
  const page = `<!doctype html><form id="f" method="post" action="${action}">${inputs}</form><script>document.getElementById("f").submit()</script>`;
  return listen(createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(page)));
}

async function listen(server: Server): Promise<{ origin: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
