import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type HttpBindings, serve } from "@hono/node-server";
import type { MountedAdapter } from "@postel/core/testing";

/**
 * Serves `app` with Hono's Node server on an ephemeral 127.0.0.1 port: Node's request → `Request`
 * path, with the Node request and response as the env (`c.env.incoming`), as `serve(app)` passes them.
 */
export async function listen(
  app: { fetch: (request: Request, env: HttpBindings) => Response | Promise<Response> },
  path = "/webhooks",
): Promise<MountedAdapter & { url: string; server: Server }> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve(
      { fetch: (request, env) => app.fetch(request, env as HttpBindings), hostname: "127.0.0.1", port: 0 },
      () => resolve(s),
    );
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return {
    url,
    server: server as Server,
    async post(body, headers) {
      const response = await fetch(url, { method: "POST", body, headers });
      return { status: response.status, headers: response.headers, text: await response.text() };
    },
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
