/**
 * `@postel/dashboard/fastify`: mount the dashboard in Fastify 5 as a plugin. Loads nothing from
 * Fastify itself (its types only).
 */
import { fastifyMount } from "@postel/web-kit/fastify";
import type { FastifyPluginAsync } from "fastify";
import type { Dashboard } from "../create-dashboard.js";

/**
 * A Fastify plugin serving `dashboard` under the plugin's `prefix`, which must be the dashboard's
 * `basePath`. No parser of the app reads its bodies: the dashboard streams them itself, after `authorize`.
 * @example
 * app.register(fastifyDashboard(dashboard), { prefix: "/postel" });
 */
export function fastifyDashboard(dashboard: Dashboard): FastifyPluginAsync {
  return fastifyMount(dashboard, {
    surface: "Postel dashboard",
    mountCall: 'app.register(fastifyDashboard(dashboard), { prefix: "<path>" })',
  });
}
