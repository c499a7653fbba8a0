/**
 * `@postel/dashboard/express`: mount the dashboard in Express 4 or 5 with one line. Loads nothing
 * from Express itself (its types only).
 */
import type { RequestHandler } from "express";
import type { Dashboard } from "../create-dashboard.js";
import { toWebRequest, writeWebResponse } from "./node-http.js";

/**
 * Express middleware serving `dashboard` where it is mounted, which must be the dashboard's `basePath`.
 * Works before or after `express.urlencoded()`.
 * @example
 * app.use("/postel", expressDashboard(dashboard));
 */
export function expressDashboard(dashboard: Dashboard): RequestHandler {
  return (req, res, next) => {
    if (req.baseUrl !== dashboard.basePath) {
      next(
        new Error(
          `The Postel dashboard is mounted at "${req.baseUrl || "/"}" but was created with basePath "${dashboard.basePath || "/"}": ` +
            `pass the same path to both, e.g. app.use("${dashboard.basePath || "/"}", expressDashboard(dashboard)).`,
        ),
      );
      return;
    }
    const url = `${req.protocol}://${req.get("host")}${req.originalUrl}`;
    toWebRequest(req, url, req.body)
      .then(dashboard)
      .then((response) => writeWebResponse(res, response))
      .catch(next);
  };
}
