/** `@postel/web-kit/hono`: mount a Postel surface in Hono. Loads nothing from Hono itself (its types only). */
import type { Handler } from "hono";
import type { MountableHandler } from "./mountable.js";

/**
 * A Hono handler serving `handler`; route it at its `basePath` and everything below. The handler
 * reads the body itself, so mount it before any middleware that parses it.
 */
export function honoMount(handler: MountableHandler): Handler {
  return (c) => handler(c.req.raw);
}
