import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import type { Portal } from "../../../src/index.js";
import { expressPortal } from "../../../src/mounts/express.js";

/** A server on 127.0.0.1: its origin, and a close that drops kept-alive browser connections. */
export interface TestServer {
  origin: string;
  close(): Promise<void>;
}

/** A real Express app on 127.0.0.1 mounting `portal` at its basePath with `@postel/portal/express`. */
export function servePortal(portal: Portal): Promise<TestServer> {
  const app = express();
  app.use(portal.basePath, expressPortal(portal));
  return listen(createServer(app));
}

/**
 * Another origin (another port of 127.0.0.1: same site, other origin), serving whatever page
 * `show()` last set, as an attacker's or an embedding app's page would.
 */
export async function serveOtherOrigin(): Promise<TestServer & { show(html: string): void }> {
  let page = "<!doctype html><title>empty</title>";
  const server = await listen(
    createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page)),
  );
  return {
    ...server,
    show: (html) => {
      page = html;
    },
  };
}

/** A page that posts a form to `action` as soon as it loads (no click: a CSRF attempt). */
export function autoPostingPage(action: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${attribute(name)}" value="${attribute(value)}">`)
    .join("");
  return `<!doctype html><title>win a prize</title><form id="f" method="post" action="${attribute(action)}">${inputs}</form><script>document.getElementById("f").submit()</script>`;
}

/** A page that embeds `src` in an iframe with id `embedded`. */
export function framingPage(src: string): string {
  return `<!doctype html><title>framing</title><iframe id="embedded" src="${attribute(src)}" width="800" height="600"></iframe>`;
}

const attribute = (value: string) => value.replaceAll("&", "&amp;").replaceAll('"', "&quot;");

async function listen(server: Server): Promise<TestServer> {
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
