import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { InMemoryStorage, Postel } from "@postel/core";
import type { MountableHandler } from "@postel/web-kit";
import { toWebRequest, writeWebResponse } from "@postel/web-kit/node";
import { type HardeningMount, runMountHardening } from "@postel/web-kit/testing";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterAll } from "vitest";
import { createDashboard, type Dashboard } from "../src/index.js";
import { expressDashboard } from "../src/mounts/express.js";
import { fastifyDashboard } from "../src/mounts/fastify.js";
import { honoDashboard } from "../src/mounts/hono.js";
import { nextDashboard } from "../src/mounts/next.js";

const postel = Postel({ outbound: { storage: InMemoryStorage() } });
afterAll(() => postel.close());

async function listen(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The four one-line mounts, each on a real server as an app would run it. */
const mounts: HardeningMount[] = [
  {
    name: "Express",
    start: (handler) => {
      // No body parser of the app's before it: the mount itself must not read the body early.
      const app = express();
      app.use("/postel", expressDashboard(handler as Dashboard));
      return listen(createServer(app));
    },
  },
  {
    name: "Fastify",
    start: async (handler) => {
      const app = Fastify();
      app.register(fastifyDashboard(handler as Dashboard), { prefix: "/postel" });
      await app.listen({ port: 0, host: "127.0.0.1" });
      return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
    },
  },
  {
    name: "Hono on @hono/node-server",
    start: async (handler) => {
      const app = new Hono();
      app.all("/postel/*", honoDashboard(handler as Dashboard));
      app.all("/postel", honoDashboard(handler as Dashboard));
      const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
      await new Promise((resolve) => server.once("listening", resolve));
      return {
        port: (server.address() as AddressInfo).port,
        close: async () => {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
        },
      };
    },
  },
  {
    name: "Next route handlers (on a Node server, as Next serves them)",
    start: (handler) => {
      const route = nextDashboard(handler as Dashboard);
      return listen(
        createServer(async (req, res) => {
          const request = toWebRequest(req, { protocol: "http", host: req.headers.host, target: req.url });
          if (request === null) {
            res.writeHead(400).end();
            return;
          }
          const method = (req.method ?? "GET") as keyof typeof route;
          const answer = Object.hasOwn(route, method)
            ? await route[method](request)
            : new Response(null, { status: 405 });
          await writeWebResponse(res, answer);
        }),
      );
    },
  },
];

runMountHardening({
  surface: "dashboard",
  basePath: "/postel",
  page: "/",
  create: (identify, onError): MountableHandler =>
    createDashboard({ postel, basePath: "/postel", authorize: identify, onError }),
  mounts,
});
