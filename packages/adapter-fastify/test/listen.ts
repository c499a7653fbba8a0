import type { Server } from "node:http";
import type { MountedAdapter } from "@postel/core/testing";
import type { FastifyInstance } from "fastify";

/** Starts `app` on a real listener (127.0.0.1, a free port) and POSTs exact bytes to `url` (`path` on it). */
export async function listen(
  app: FastifyInstance,
  path = "/webhooks",
): Promise<MountedAdapter & { url: string; server: Server }> {
  const url = (await app.listen({ port: 0, host: "127.0.0.1" })) + path;
  return {
    url,
    server: app.server,
    async post(body, headers) {
      const response = await fetch(url, { method: "POST", body, headers });
      return { status: response.status, headers: response.headers, text: await response.text() };
    },
    close: () => app.close(),
  };
}
