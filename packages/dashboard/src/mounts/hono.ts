/**
 * `@postel/dashboard/hono`: mount the dashboard in Hono. Loads nothing from Hono itself (its types only).
 */
import { honoMount } from "@postel/web-kit/hono";
import type { Handler } from "hono";
import type { Dashboard } from "../create-dashboard.js";

/**
 * A Hono handler serving `dashboard`; route it at the dashboard's `basePath` and everything below.
 * The dashboard reads the body itself, so mount it before any middleware that parses it.
 * @example
 * app.all("/postel/*", honoDashboard(dashboard));
 */
export function honoDashboard(dashboard: Dashboard): Handler {
  return honoMount(dashboard);
}
