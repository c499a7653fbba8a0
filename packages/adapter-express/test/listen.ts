import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { MountedAdapter } from "@postel/core/testing";
import type { Express } from "express";

/** Serves `app` on a real `http.Server` (127.0.0.1, a free port) and POSTs exact bytes to `url` (`path` on it). */
export async function listen(
  app: Express,
  path = "/webhooks",
): Promise<MountedAdapter & { url: string; server: Server }> {
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return {
    url,
    server,
    async post(body, headers) {
      const response = await fetch(url, { method: "POST", body, headers });
      return { status: response.status, headers: response.headers, text: await response.text() };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
