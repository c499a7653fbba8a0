import { InboundError } from "./errors.js";

/**
 * For framework adapters: reads a body (a Web stream, or a Node stream) into bytes, keeping at most `limit` of them: past
 * that it drains the rest without storing it and returns `undefined`. (Stopping mid-stream instead
 * left a sender of 8 MiB stalled for seconds before it read the 413, over Node's HTTP server.)
 * `readRequest()` and `readNodeRequest()` do the whole read (limit, "already parsed" check) and
 * answer as soon as the limit is passed.
 */
export async function readBody(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array | undefined> {
  const read = await readLimited(chunksOf(source), limit);
  if (read.kind === "aborted") throw read.error;
  if (read.kind === "too-large") {
    await read.drained;
    return undefined;
  }
  return read.body;
}

/** How reading a body ended: its bytes, past the limit, or broken off (the client went away). */
export type LimitedRead =
  | { kind: "body"; body: Uint8Array }
  | { kind: "too-large"; drained: Promise<void> }
  | { kind: "aborted"; error: unknown };

/**
 * The one body reader of the gate: collects chunks up to `limit` bytes. Past it, it resolves at once,
 * so the 413 can go out while the sender is still sending, and keeps pulling the rest without storing
 * it (`drained`), so a sender that reads its answer only after its last byte is never stalled.
 */
export async function readLimited(chunks: AsyncIterator<Uint8Array>, limit: number): Promise<LimitedRead> {
  const kept: Uint8Array[] = [];
  let size = 0;
  try {
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
      size += next.value.byteLength;
      if (size > limit) return { kind: "too-large", drained: discard(chunks) };
      kept.push(next.value);
    }
  } catch (error) {
    return { kind: "aborted", error };
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of kept) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { kind: "body", body };
}

async function discard(chunks: AsyncIterator<Uint8Array>): Promise<void> {
  try {
    while (!(await chunks.next()).done);
  } catch {
    // The sender went away (or the connection was closed after the 413): nothing is left to drain.
  }
}

/** The chunks of a Web stream (through a reader: some runtimes cannot iterate one) or of a Node stream. */
export function chunksOf(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | null,
): AsyncIterator<Uint8Array> {
  if (source === null) return { next: async () => ({ done: true, value: undefined }) };
  if ("getReader" in source) {
    const reader = source.getReader();
    return { next: () => reader.read() as Promise<IteratorResult<Uint8Array>> };
  }
  return source[Symbol.asyncIterator]();
}

/** The gate's 413, for a body refused before (or while) it is read. */
export function payloadTooLarge(limit: number, source: string): InboundError {
  return new InboundError(
    "PAYLOAD_TOO_LARGE",
    `The body is larger than ${limit} bytes, the limit of source "${source}".`,
  );
}
