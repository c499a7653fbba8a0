/**
 * For framework adapters on Node: a request's headers with every copy of a repeated header kept, as
 * `readHeader` needs them to apply its rules (identical copies collapse, disagreeing ones are
 * refused, `webhook-signature` lists are joined). Node's `headers`, and fetch `Headers`, have
 * already joined the copies with ", " (or kept only the first, for `content-type` and a few
 * others). A header sent once stays a string, as in `headers`; a repeated one becomes the list of
 * its values in arrival order. Reads `rawHeaders`, which `IncomingMessage` and HTTP/2's
 * `Http2ServerRequest` both have (only the former has `headersDistinct`).
 * @example
 * receiver.handle(source, { body, headers: distinctHeaders(req), url }, handler);
 */
export function distinctHeaders(request: {
  readonly rawHeaders: readonly string[];
}): Record<string, string | string[]> {
  // No prototype: a header named `__proto__` is just a header.
  const headers: Record<string, string | string[]> = Object.create(null);
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const seen = headers[name];
    if (seen === undefined) headers[name] = value;
    else if (typeof seen === "string") headers[name] = [seen, value];
    else seen.push(value);
  }
  return headers;
}
