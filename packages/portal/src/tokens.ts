/**
 * The portal's signed tokens: the links an app mints for a tenant, and the session cookie a link
 * is exchanged for. Both are `v1.<claims>.<HMAC-SHA256>` (base64url), keyed by the app's portal
 * secrets: the first signs, every one verifies, so a key is rotated by putting the new one first
 * and revoked (every link and session it signed) by dropping it. The kind is signed with the
 * claims, so a session cookie is never accepted as a link, nor a link as a session.
 */
import { fromBase64Url, toBase64Url } from "@postel/web-kit";
import { PortalConfigurationError } from "./errors.js";

/** What a token says: whose portal, who acts there (for the audit log), until when, and its one-time value. */
export interface PortalClaims {
  tenantId: string;
  actor: string;
  /** Epoch ms; the token is refused from this instant on. */
  expiresAt: number;
  /** Random per token: a link is exchanged once, by this value. */
  nonce: string;
}

/** A link (exchanged once for a session) or a session (the cookie). */
export type TokenKind = "link" | "session";

/** Why a token was refused (never echoed to the client beyond "expired" or "not valid"). */
export type TokenRefusal = "malformed" | "bad-signature" | "wrong-kind" | "expired";

/** Mints and opens the portal's tokens with one list of keys. */
export interface PortalTokens {
  /** A signed token of `kind` for the claims, with a fresh nonce. */
  mint(kind: TokenKind, claims: Omit<PortalClaims, "nonce">): Promise<string>;
  /** The claims of a valid, unexpired token of `kind` at `now`, else why it is refused. */
  open(kind: TokenKind, token: string, now: number): Promise<PortalClaims | TokenRefusal>;
}

const MAX_TOKEN_LENGTH = 2048;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Tokens keyed by `secrets` (one string or a list, newest first; each at least 32 characters). */
export function createPortalTokens(secrets: string | readonly string[]): PortalTokens {
  const list = typeof secrets === "string" ? [secrets] : [...secrets];
  if (list.length === 0 || list.some((secret) => typeof secret !== "string" || secret.length < 32)) {
    throw new PortalConfigurationError(
      "PORTAL_INVALID_OPTIONS",
      "The portal's `secret` must be a string of at least 32 characters, or a list of them (newest " +
        "first: the first signs, all verify; drop one to revoke every link and session it signed). " +
        "Generate one with `openssl rand -base64 32`.",
    );
  }
  const keys = list.map((secret) =>
    crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]),
  );
  return {
    async mint(kind, claims) {
      const nonce = toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
      const body = { k: kind, t: claims.tenantId, a: claims.actor, e: claims.expiresAt, n: nonce };
      const payload = `v1.${toBase64Url(encoder.encode(JSON.stringify(body)))}`;
      const mac = await crypto.subtle.sign("HMAC", await keys[0]!, encoder.encode(payload));
      return `${payload}.${toBase64Url(new Uint8Array(mac))}`;
    },
    async open(kind, token, now) {
      if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) return "malformed";
      const [version, claims, signature, extra] = token.split(".");
      if (version !== "v1" || claims === undefined || signature === undefined || extra !== undefined)
        return "malformed";
      const mac = fromBase64Url(signature, 64);
      const json = fromBase64Url(claims, MAX_TOKEN_LENGTH);
      if (mac === null || json === null) return "malformed";
      const signed = encoder.encode(`v1.${claims}`);
      let valid = false;
      for (const key of keys) valid = (await crypto.subtle.verify("HMAC", await key, mac, signed)) || valid;
      if (!valid) return "bad-signature";
      const body = parse(json);
      if (body === null) return "malformed";
      if (body.k !== kind) return "wrong-kind";
      if (now >= body.e) return "expired";
      return { tenantId: body.t, actor: body.a, expiresAt: body.e, nonce: body.n };
    },
  };
}

interface Body {
  k: string;
  t: string;
  a: string;
  e: number;
  n: string;
}

function parse(json: Uint8Array): Body | null {
  try {
    const body: unknown = JSON.parse(decoder.decode(json));
    if (typeof body !== "object" || body === null) return null;
    const { k, t, a, e, n } = body as Record<string, unknown>;
    if (typeof k !== "string" || typeof t !== "string" || typeof a !== "string" || typeof n !== "string")
      return null;
    return typeof e === "number" && Number.isFinite(e) ? { k, t, a, e, n } : null;
  } catch {
    return null;
  }
}
