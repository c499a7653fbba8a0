import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { MountableHandler } from "./mounts/mountable.js";
import type { NextRoute } from "./mounts/next.js";
import { toWebRequest, writeWebResponse } from "./node.js";

/** A running server that serves a handler through one framework's mount. */
export interface MountedServer {
  port: number;
  close(): Promise<void>;
}

/** One framework's mount, as the suite starts it. */
export interface HardeningMount {
  /** For test titles, e.g. `"Express"`. */
  name: string;
  /** Serves `handler` at its `basePath` through the mount, on 127.0.0.1 and a free port. */
  start(handler: MountableHandler): Promise<MountedServer>;
}

/** The frameworks, passed in so `@postel/web-kit/testing` loads none of them itself. */
export interface Frameworks {
  express: () => { use(path: string, handler: unknown): unknown } & RequestListener;
  Fastify: () => {
    register(plugin: never, options: { prefix: string }): unknown;
    listen(options: { port: number; host: string }): Promise<string>;
    close(): Promise<unknown>;
    server: Server;
  };
  Hono: new () => { all(path: string, handler: never): unknown; fetch: unknown };
  serve: (options: { fetch: never; port: number; hostname: string }) => unknown;
}

/** A surface's one-line mounts, each taking its handler. */
export interface SurfaceMounts {
  express: (handler: never) => unknown;
  fastify: (handler: never) => unknown;
  hono: (handler: never) => unknown;
  next: (handler: never) => Partial<NextRoute>;
}

async function listen(server: Server): Promise<MountedServer> {
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * The four mounts of a surface on real servers, as apps run them: Express (no body parser of the
 * app's before it), Fastify, Hono on `@hono/node-server`, and Next's route handlers on a Node
 * server the way Next serves them.
 */
export function frameworkMounts(
  frameworks: Frameworks,
  mounts: SurfaceMounts,
  basePath: string,
): HardeningMount[] {
  return [
    {
      name: "Express",
      start: (handler) => {
        const app = frameworks.express();
        app.use(basePath, mounts.express(handler as never));
        return listen(createServer(app));
      },
    },
    {
      name: "Fastify",
      start: async (handler) => {
        const app = frameworks.Fastify();
        app.register(mounts.fastify(handler as never) as never, { prefix: basePath });
        await app.listen({ port: 0, host: "127.0.0.1" });
        return {
          port: (app.server.address() as AddressInfo).port,
          close: async () => void (await app.close()),
        };
      },
    },
    {
      name: "Hono on @hono/node-server",
      start: async (handler) => {
        const app = new frameworks.Hono();
        app.all(`${basePath}/*`, mounts.hono(handler as never) as never);
        app.all(basePath, mounts.hono(handler as never) as never);
        const server = frameworks.serve({
          fetch: app.fetch as never,
          port: 0,
          hostname: "127.0.0.1",
        }) as Server;
        await new Promise((resolve) => server.once("listening", resolve));
        return listen(server);
      },
    },
    {
      name: "Next route handlers (on a Node server, as Next serves them)",
      start: (handler: MountableHandler) => {
        const route = mounts.next(handler as never);
        return listen(
          createServer(async (req, res) => {
            const request = toWebRequest(req, { protocol: "http", host: req.headers.host, target: req.url });
            const method = (req.method ?? "GET") as keyof NextRoute;
            const serve = Object.hasOwn(route, method) ? route[method] : undefined;
            const answer =
              request === null || serve === undefined
                ? new Response(null, { status: request === null ? 400 : 405 })
                : await serve(request);
            await writeWebResponse(res, answer);
          }),
        );
      },
    },
  ];
}
