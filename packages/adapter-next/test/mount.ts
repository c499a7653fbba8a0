import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AdapterResponse, MountedAdapter } from "@postel/core/testing";
import { apiResolver } from "next/dist/server/api-utils/node/api-resolver.js";
import { NodeNextRequest } from "next/dist/server/base-http/node.js";
import {
  NextRequestAdapter,
  signalFromNodeResponse,
} from "next/dist/server/web/spec-extension/adapters/next-request.js";

const URL = "http://localhost:3000/api/webhooks";

/** Calls an App Router route in process, as Next does: a `Request` (or `NextRequest`) in, a `Response` out. */
export function callRoute(
  route: (request: Request) => Promise<Response>,
  toRequest: (url: string, init: RequestInit) => Request = (url, init) => new Request(url, init),
): MountedAdapter {
  return {
    post: async (body, headers) => read(await route(toRequest(URL, { method: "POST", body, headers }))),
    close: async () => {},
  };
}

/**
 * Serves a Pages Router API route on a real 127.0.0.1 `http.Server` through Next's own `apiResolver`,
 * which applies the route's `config.api.bodyParser` exactly as `next start` does.
 */
export function serveApiRoute(
  route: RequestListener,
  config: { api: { bodyParser: boolean } },
): Promise<MountedAdapter & { url: string; server: Server }> {
  const preview = { previewModeId: "", previewModeEncryptionKey: "", previewModeSigningKey: "" };
  return serve((req, res) =>
    apiResolver(req, res, {}, { default: route, config }, { ...preview, dev: false }, false),
  );
}

/**
 * Serves an App Router route on a real 127.0.0.1 `http.Server`, building its `NextRequest` from
 * Node's request with Next's own adapter, as `next start` does (headers and body stream included).
 */
export function serveRoute(
  route: (request: Request) => Promise<Response>,
): Promise<MountedAdapter & { url: string; server: Server }> {
  return serve(async (req, res) => {
    const request = NextRequestAdapter.fromNodeNextRequest(
      new NodeNextRequest(req),
      signalFromNodeResponse(res),
    );
    const response = await route(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
}

async function serve(listener: RequestListener): Promise<MountedAdapter & { url: string; server: Server }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks`;
  return {
    url,
    server,
    post: async (body, headers) => read(await fetch(url, { method: "POST", body, headers })),
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}

async function read(response: Response): Promise<AdapterResponse> {
  return { status: response.status, headers: response.headers, text: await response.text() };
}
