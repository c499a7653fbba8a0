import { reencodeLegacyQuery } from "./twilio-legacy-query.js";

/**
 * The URLs a Twilio signature may have been computed over, for the URL a request arrived on, in the
 * order twilio-node's `validateRequest` tries them: as received, without and with its port; then as
 * `new URL()` writes it (spaces, quotes and non-ASCII percent-encoded, the host lower-cased and
 * punycoded, a default port dropped), without and with its port, and each of those with its query
 * re-encoded by Node's legacy `querystring`, for back ends that signed an escaped form. Every form
 * is derived from the one URL, so accepting them widens no one's choice of what was signed.
 */
export function signedUrls(url: string): string[] {
  const normalized = new URL(url).toString();
  const withoutPort = removePort(normalized);
  const withPort = addPort(normalized);
  return [
    ...new Set([
      removePort(url),
      addPort(url),
      withoutPort,
      withPort,
      withLegacyQuery(withoutPort),
      withLegacyQuery(withPort),
    ]),
  ];
}

// Split by hand, as twilio-node does: `new URL()` would re-encode the path and query Twilio signed.
function splitUrl(url: string) {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!match) return undefined;
  const [prefix, scheme, authority] = match as unknown as [string, string, string];
  const userInfoEnd = authority.lastIndexOf("@");
  const hostAndPort = authority.slice(userInfoEnd + 1);
  // A colon starts the port only after the closing bracket of an IPv6 literal.
  const portStart = hostAndPort.indexOf(":", hostAndPort.lastIndexOf("]") + 1);
  return {
    scheme,
    userInfo: authority.slice(0, userInfoEnd + 1),
    host: portStart === -1 ? hostAndPort : hostAndPort.slice(0, portStart),
    port: portStart === -1 ? "" : hostAndPort.slice(portStart),
    rest: url.slice(prefix.length),
  };
}

function removePort(url: string): string {
  const parts = splitUrl(url);
  return parts ? parts.scheme + parts.userInfo + parts.host + parts.rest : url;
}

function addPort(url: string): string {
  const parts = splitUrl(url);
  if (!parts || parts.port) return url;
  const port = parts.scheme.toLowerCase() === "https://" ? ":443" : ":80";
  return parts.scheme + parts.userInfo + parts.host + port + parts.rest;
}

function withLegacyQuery(url: string): string {
  const queryStart = url.indexOf("?");
  if (queryStart === -1 || queryStart === url.length - 1) return url;
  return `${url.slice(0, queryStart)}?${reencodeLegacyQuery(url.slice(queryStart + 1))}`;
}
