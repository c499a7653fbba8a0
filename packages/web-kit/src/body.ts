/** The largest request body Postel's pages and APIs read: their forms and JSON documents are small. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A request body was larger than the surface reads; answer 413. */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  constructor(readonly maxBytes: number) {
    super(`The request body is larger than ${maxBytes} bytes.`);
  }
}

/**
 * Reads a request's body as UTF-8 text, at most `maxBytes`: a larger `Content-Length` is refused
 * before a byte is read, and a stream that grows past it is cancelled. Call it only once the
 * request is authorized, so an anonymous client cannot make the server read anything.
 */
export async function readBodyText(request: Request, maxBytes = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new BodyTooLargeError(maxBytes);
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new BodyTooLargeError(maxBytes);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
