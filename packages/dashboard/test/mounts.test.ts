import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { InMemoryStorage, Postel } from "@postel/core";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { toWebRequest, writeWebResponse } from "@postel/web-kit/node";
import { afterAll, describe, expect, test } from "vitest";
import { createDashboard } from "../src/index.js";
import { expressDashboard } from "../src/mounts/express.js";
import { fastifyDashboard } from "../src/mounts/fastify.js";
import { honoDashboard } from "../src/mounts/hono.js";
import { nextDashboard } from "../src/mounts/next.js";

const postel = Postel({ outbound: { storage: InMemoryStorage() } });
const endpoint = await postel.outbound.endpoints.create({ url: "https://example.com/hook" });
const dashboard = createDashboard({ postel, basePath: "/postel", authorize: () => true });
afterAll(() => postel.close());

/** GET the endpoint page like a browser, then POST its disable form with the cookie and token it got. */
async function disableThroughForm(origin: string): Promise<void> {
  await postel.outbound.endpoints.enable(endpoint.id);
  const root = await fetch(`${origin}/postel`);
  expect(root.status).toBe(200);
  expect(root.headers.get("content-security-policy")).toContain("default-src 'none'");
  const page = await fetch(`${origin}/postel/endpoints/${endpoint.id}`);
  const cookie = page.headers.getSetCookie()[0]!.split(";")[0]!;
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const css = await fetch(`${origin}/postel/assets/dashboard.css`, { headers: { cookie } });
  expect(css.headers.get("content-type")).toContain("text/css");
  const posted = await fetch(`${origin}/postel/endpoints/${endpoint.id}/disable`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ _csrf: token }),
  });
  expect(posted.status).toBe(303);
  expect(posted.headers.get("location")).toBe(`/postel/endpoints/${endpoint.id}?done=disabled`);
  expect((await postel.outbound.endpoints.get(endpoint.id))?.state).toBe("disabled");
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("one-line mounts on real servers", () => {
  test("Express: app.use(basePath, expressDashboard(dashboard)), also after express.urlencoded()", async () => {
    for (const parsed of [false, true]) {
      const app = express();
      if (parsed) app.use(express.urlencoded({ extended: false }));
      app.use("/postel", expressDashboard(dashboard));
      const server = createServer(app);
      try {
        await disableThroughForm(await listen(server));
      } finally {
        server.closeAllConnections();
        server.close();
      }
    }
  });

  test("Express: a mount path other than basePath is an error that names both", async () => {
    const app = express();
    app.use("/elsewhere", expressDashboard(dashboard));
    let reported: unknown;
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      reported = error;
      res.status(500).end();
    });
    const server = createServer(app);
    try {
      expect((await fetch(`${await listen(server)}/elsewhere`)).status).toBe(500);
      expect(String(reported)).toContain('created with basePath "/postel"');
    } finally {
      server.close();
    }
  });

  test("Fastify: app.register(fastifyDashboard(dashboard), { prefix })", async () => {
    const app = Fastify();
    app.register(fastifyDashboard(dashboard), { prefix: "/postel" });
    try {
      await disableThroughForm(await app.listen({ port: 0, host: "127.0.0.1" }));
    } finally {
      await app.close();
    }
  });

  test('Hono on @hono/node-server: app.all("/postel/*", honoDashboard(dashboard))', async () => {
    const app = new Hono();
    app.all("/postel/*", honoDashboard(dashboard));
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    try {
      await new Promise((resolve) => server.once("listening", resolve));
      await disableThroughForm(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      server.close();
    }
  });

  test("Next App Router: export const { GET, HEAD, POST } = nextDashboard(dashboard)", async () => {
    const { GET, POST } = nextDashboard(dashboard);
    // Route handlers get Web Requests; serve them from a plain Node server as Next's would.
    const server = createServer(async (req, res) => {
      const request = toWebRequest(req, { protocol: "http", host: req.headers.host, target: req.url })!;
      await writeWebResponse(res, await (req.method === "POST" ? POST : GET)(request));
    });
    try {
      await disableThroughForm(await listen(server));
    } finally {
      server.close();
    }
  });
});
