import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createDashboard, type DashboardPostel } from "@postel/dashboard";
import { expressDashboard } from "@postel/dashboard/express";
import express from "express";

const BASE = "/postel";
const COOKIE = "postel_demo_token";

/** The dashboard the demo serves on 127.0.0.1, and the one secret that opens it. */
export interface DemoDashboard {
  /** The dashboard's root, without credentials: a visitor gets 403. */
  url: string;
  /** The root with `?token=`: opening it once sets the token as a cookie and redirects to `url`. */
  loginUrl: string;
  /** The `cookie` header a logged-in browser sends. */
  cookie: string;
  close(): Promise<void>;
}

/**
 * Mounts `@postel/dashboard` on a local Express app (its one-line mount) behind a token made for this
 * run: `?token=` once (answered with an `HttpOnly`, `SameSite=Strict` cookie and a redirect that takes
 * the token out of the address bar and history), then the cookie on every page, asset and form.
 */
export async function startDashboard(postel: DashboardPostel): Promise<DemoDashboard> {
  const token = randomBytes(32).toString("base64url");
  const dashboard = createDashboard({
    postel,
    basePath: BASE,
    title: "Postel demo",
    authorize(request) {
      const url = new URL(request.url);
      const offered = url.searchParams.get("token");
      if (offered === null) return matches(cookieOf(request, COOKIE), token);
      if (!matches(offered, token)) return false;
      url.searchParams.delete("token");
      return new Response(null, {
        status: 303,
        headers: {
          location: `${url.pathname}${url.search}`,
          "set-cookie": `${COOKIE}=${token}; Path=${BASE}; HttpOnly; SameSite=Strict`,
        },
      });
    },
  });
  const app = express();
  app.use(BASE, expressDashboard(dashboard));
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${BASE}/`;
  return {
    url,
    loginUrl: `${url}?token=${token}`,
    cookie: `${COOKIE}=${token}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Compares in constant time (both hashed first, so lengths do not leak either). */
function matches(offered: string | undefined, token: string): boolean {
  if (offered === undefined) return false;
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(offered), digest(token));
}

function cookieOf(request: Request, name: string): string | undefined {
  for (const pair of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...value] = pair.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}
