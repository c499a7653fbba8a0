/**
 * `@postel/web-kit/fastify`: mount a Postel surface in Fastify 5 as a plugin. Loads nothing from
 * Fastify itself (its types only).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { toWebRequest } from "../node.js";
import { createResponder } from "../respond.js";
import { type MountableHandler, type MountNames, mountMismatch } from "./mountable.js";

const refusals = createResponder();

/**
 * A Fastify plugin serving `handler` under the plugin's `prefix`, which must be its `basePath`.
 * In its own scope no parser reads the body: the handler streams it once it has identified the
 * caller, so the app's parsers are untouched and an anonymous client cannot make it read anything.
 */
export function fastifyMount(handler: MountableHandler, names: MountNames): FastifyPluginAsync {
  return async (scope) => {
    if (scope.prefix !== handler.basePath)
      throw mountMismatch(handler, scope.prefix, names, "registered with prefix");
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      "*",
      (_request: FastifyRequest, _payload: unknown, done: (error: null) => void) => done(null),
    );
    const serve = async (request: FastifyRequest, reply: FastifyReply) => {
      const web = toWebRequest(request.raw, {
        protocol: request.protocol,
        host: request.host,
        target: request.raw.url,
      });
      const response = web === null ? refusals.plain(400, "Bad request") : await handler(web);
      reply.code(response.status);
      for (const [name, value] of response.headers) if (name !== "set-cookie") reply.header(name, value);
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) reply.header("set-cookie", cookies);
      return reply.send(Buffer.from(await response.arrayBuffer()));
    };
    const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
    scope.route({ method: methods, url: "/", handler: serve, exposeHeadRoute: false });
    scope.route({ method: methods, url: "/*", handler: serve, exposeHeadRoute: false });
  };
}
