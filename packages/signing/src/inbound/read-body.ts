import { InboundError } from "./errors.js";

/**
 * For framework adapters: reads a body (a Web stream, or a Node stream) into bytes, keeping at most `limit` of them: past
 * that it drains the rest without storing it and returns `undefined`. (Stopping mid-stream instead
 * left a sender of 8 MiB stalled for seconds before it read the 413, over Node's HTTP server.)
 */
export async function readBody(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source === null ? [] : "getReader" in source ? chunksOf(source) : source) {
    size += chunk.byteLength;
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit) return undefined;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

// Through a reader: the DOM typings (and some runtimes) have no async iteration of Web streams.
async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) yield read.value;
}

/** The gate's 413, for a body refused before (or while) it is read. */
export function payloadTooLarge(limit: number, source: string): InboundError {
  return new InboundError(
    "PAYLOAD_TOO_LARGE",
    `The body is larger than ${limit} bytes, the limit of source "${source}".`,
  );
}
