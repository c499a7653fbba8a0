/**
 * `@postel/portal/fastify`: mount the portal in Fastify 5 as a plugin. Loads nothing from
 * Fastify itself (its types only).
 */
import { fastifyMount } from "@postel/web-kit/fastify";
import type { FastifyPluginAsync } from "fastify";
import type { Portal } from "../create-portal.js";

/**
 * A Fastify plugin serving `portal` under the plugin's `prefix`, which must be the portal's
 * `basePath`. No parser of the app reads its bodies: the portal streams them itself, after `authenticate`.
 * @example
 * app.register(fastifyPortal(portal), { prefix: "/webhooks" });
 */
export function fastifyPortal(portal: Portal): FastifyPluginAsync {
  return fastifyMount(portal, {
    surface: "Postel portal",
    mountCall: 'app.register(fastifyPortal(portal), { prefix: "<path>" })',
  });
}
