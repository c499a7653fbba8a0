/**
 * `@postel/web-kit/express`: mount a Postel surface in Express 4 or 5. Loads nothing from Express
 * itself (its types only).
 */
import type { RequestHandler } from "express";
import { toWebRequest, writeWebResponse } from "../node.js";
import { createResponder } from "../respond.js";
import { type MountableHandler, type MountNames, mountMismatch } from "./mountable.js";

const refusals = createResponder();

/**
 * Express middleware serving `handler` where it is mounted, which must be its `basePath`. Works
 * before or after `express.urlencoded()` and `express.json()`. The URL the handler sees is built
 * from a well-formed `Host` and the path Express routed (else a plain 400); the body is streamed
 * to the handler as it reads it.
 */
export function expressMount(handler: MountableHandler, names: MountNames): RequestHandler {
  return (req, res, next) => {
    // Express routes case-insensitively: "/POSTEL" reaches a mount at "/postel". The handler answers
    // such a variant a plain 404; any other path is a mistake in the app, reported to the developer.
    if (req.baseUrl.toLowerCase() !== handler.basePath.toLowerCase()) {
      next(mountMismatch(handler, req.baseUrl, names, "mounted at"));
      return;
    }
    const request = toWebRequest(req, {
      protocol: req.protocol,
      host: req.get("host"),
      target: req.originalUrl,
      parsedBody: req.body,
    });
    (request === null ? Promise.resolve(refusals.plain(400, "Bad request")) : handler(request))
      .then((response) => writeWebResponse(res, response))
      .catch(next);
  };
}
