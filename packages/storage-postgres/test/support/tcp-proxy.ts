import { createServer, type Server, Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a database server, to fail the network as production does:
 * `freeze()` stops forwarding in both directions without closing anything (a partition, a half-open
 * session: nothing ever answers), `dropReplies()` forwards what the client sends but discards what
 * the server answers (a commit that happened but whose answer never came), `cut()` resets every
 * session it carries. The modes apply to the sessions open at the call: new sessions always pass,
 * so a client that reconnects gets through.
 */
export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /** Sessions opened through the proxy so far. */
  sessions(): number;
  freeze(): void;
  dropReplies(): void;
  /** Destroys every open session (the client sees ECONNRESET or CONNECTION_CLOSED). */
  cut(): void;
  close(): Promise<void>;
}

type Mode = "pass" | "freeze" | "drop-replies";

interface Session {
  client: Socket;
  server: Socket;
  /** Frozen sessions stay frozen: what a partition cut is never delivered late. */
  mode: Mode;
}

/** Starts a proxy to `target` (host, port). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Session>();
  let opened = 0;
  const server: Server = createServer((client) => {
    opened++;
    const upstream = new Socket();
    const session: Session = { client, server: upstream, mode: "pass" };
    open.add(session);
    upstream.connect(target.port, target.host);
    client.on("data", (chunk: Buffer) => {
      if (session.mode !== "freeze") upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (session.mode === "pass") client.write(chunk);
    });
    const close = () => {
      open.delete(session);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  const setAll = (next: Mode) => {
    for (const session of open) session.mode = next;
  };
  return {
    port: address.port,
    sessions: () => opened,
    freeze: () => setAll("freeze"),
    dropReplies: () => setAll("drop-replies"),
    cut: () => {
      for (const session of open) {
        session.client.resetAndDestroy();
        session.server.destroy();
      }
      open.clear();
    },
    close: async () => {
      for (const session of open) {
        session.client.destroy();
        session.server.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
