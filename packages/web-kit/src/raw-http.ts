import { connect } from "node:net";

/** A response read off a raw socket: status, headers (lower-case names; repeats joined by ", "), body. */
export interface RawExchange {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `head` (the request line and headers, without the blank line) and `body` to a raw socket at
 * `127.0.0.1:port`, exactly as given (no Host is added, nothing is validated), and reads the
 * response. The socket is never half-closed (Node's server drops a half-closed client's pending
 * answer): a body shorter than its `Content-Length` is a client still uploading, and the response
 * must come without the rest. Send `Connection: close` to have the server end the exchange.
 */
export function rawExchange(port: number, head: string, body = ""): Promise<RawExchange> {
  return new Promise<RawExchange>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    const finish = () => {
      const text = received.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(":");
        const name = line.slice(0, at).trim().toLowerCase();
        const value = line.slice(at + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      const rest = received.subarray(Buffer.byteLength(text.slice(0, end + 4), "latin1"));
      // A HEAD answer announces the length of a body it does not send.
      const length = head.startsWith("HEAD ") ? "0" : headers["content-length"];
      if (length !== undefined && rest.byteLength < Number(length)) return false;
      if (length === undefined && headers["transfer-encoding"] === "chunked" && !rest.includes("0\r\n\r\n"))
        return false;
      socket.destroy();
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: rest.toString("utf8") });
      return true;
    };
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      finish();
    });
    socket.on("end", () => {
      if (!finish())
        reject(new Error(`The connection closed after ${received.byteLength} bytes of response.`));
    });
    socket.on("error", (error) => {
      if (!finish()) reject(error);
    });
    socket.write(`${head}\r\n\r\n${body}`);
  });
}
