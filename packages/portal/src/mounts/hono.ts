/**
 * `@postel/portal/hono`: mount the portal in Hono. Loads nothing from Hono itself (its types only).
 */
import { honoMount } from "@postel/web-kit/hono";
import type { Handler } from "hono";
import type { Portal } from "../create-portal.js";

/**
 * A Hono handler serving `portal`; route it at the portal's `basePath` and everything below.
 * The portal reads the body itself, so mount it before any middleware that parses it.
 * @example
 * app.all("/webhooks/*", honoPortal(portal));
 */
export function honoPortal(portal: Portal): Handler {
  return honoMount(portal);
}
