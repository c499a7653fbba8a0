/**
 * `@postel/dashboard/fastify`: mount the dashboard in Fastify 5 as a plugin. Loads nothing from
 * Fastify itself (its types only).
 */
import type { FastifyPluginAsync } from "fastify";
import type { Dashboard } from "../create-dashboard.js";
import { toWebRequest } from "./node-http.js";

/**
 * A Fastify plugin serving `dashboard` under the plugin's `prefix`, which must be the dashboard's
 * `basePath`. Its form bodies are read raw in the plugin's own scope, so the app's parsers are untouched.
 * @example
 * app.register(fastifyDashboard(dashboard), { prefix: "/postel" });
 */
export function fastifyDashboard(dashboard: Dashboard): FastifyPluginAsync {
  return async (scope) => {
    if (scope.prefix !== dashboard.basePath) {
      throw new Error(
        `The Postel dashboard is registered with prefix "${scope.prefix || "/"}" but was created with basePath "${dashboard.basePath || "/"}": ` +
          `pass the same path to both, e.g. app.register(fastifyDashboard(dashboard), { prefix: "${dashboard.basePath || "/"}" }).`,
      );
    }
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: 1024 * 1024 }, (_request, body, done) =>
      done(null, body),
    );
    const handler = async (
      request: import("fastify").FastifyRequest,
      reply: import("fastify").FastifyReply,
    ) => {
      const url = `${request.protocol}://${request.host}${request.raw.url ?? request.url}`;
      const response = await dashboard(await toWebRequest(request.raw, url, request.body));
      reply.code(response.status);
      for (const [name, value] of response.headers) if (name !== "set-cookie") reply.header(name, value);
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) reply.header("set-cookie", cookies);
      return reply.send(Buffer.from(await response.arrayBuffer()));
    };
    scope.route({ method: ["GET", "HEAD", "POST"], url: "/", handler, exposeHeadRoute: false });
    scope.route({ method: ["GET", "HEAD", "POST"], url: "/*", handler, exposeHeadRoute: false });
  };
}
