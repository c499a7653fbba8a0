/**
 * `@postel/dashboard/express`: mount the dashboard in Express 4 or 5 with one line. Loads nothing
 * from Express itself (its types only).
 */
import { expressMount } from "@postel/web-kit/express";
import type { RequestHandler } from "express";
import type { Dashboard } from "../create-dashboard.js";

/**
 * Express middleware serving `dashboard` where it is mounted, which must be the dashboard's `basePath`.
 * Works before or after `express.urlencoded()`.
 * @example
 * app.use("/postel", expressDashboard(dashboard));
 */
export function expressDashboard(dashboard: Dashboard): RequestHandler {
  return expressMount(dashboard, {
    surface: "Postel dashboard",
    mountCall: 'app.use("<path>", expressDashboard(dashboard))',
  });
}
