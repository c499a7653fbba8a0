/**
 * `@postel/portal/express`: mount the portal in Express 4 or 5 with one line. Loads nothing
 * from Express itself (its types only).
 */
import { expressMount } from "@postel/web-kit/express";
import type { RequestHandler } from "express";
import type { Portal } from "../create-portal.js";

/**
 * Express middleware serving `portal` where it is mounted, which must be the portal's `basePath`.
 * Works before or after `express.urlencoded()`.
 * @example
 * app.use("/webhooks", expressPortal(portal));
 */
export function expressPortal(portal: Portal): RequestHandler {
  return expressMount(portal, {
    surface: "Postel portal",
    mountCall: 'app.use("<path>", expressPortal(portal))',
  });
}
