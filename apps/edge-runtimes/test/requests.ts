import { randomUUID } from "node:crypto";
import { github, sign } from "@postel/signing";
import { ED25519_PRIVATE_KEY, GITHUB_SECRET, STANDARD_SECRET } from "../fixtures/keys.js";

/** A request to send to a fixture: its path, headers and the exact body that was signed. */
export interface SignedRequest {
  path: string;
  id: string;
  payload: { type: string; data: { n: number } };
  init: { method: "POST"; headers: Record<string, string>; body: string };
}

export type Source = "standard" | "ed25519" | "github";

/** A fresh webhook id, unique across runtimes and runs. */
export const newId = (prefix: string) => `msg_${prefix}_${randomUUID().slice(0, 8)}`;

/**
 * Signs a request for `source` the way its sender would: Standard Webhooks `v1` (HMAC) or `v1a`
 * (Ed25519) headers, or GitHub's `x-hub-signature-256` with the delivery id. `ageSeconds` backdates
 * the Standard Webhooks timestamp (GitHub signs none).
 */
export function signed(source: Source, id: string, options: { ageSeconds?: number } = {}): SignedRequest {
  const payload = { type: "invoice.paid", data: { n: id.length } };
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(Date.now() / 1000) - (options.ageSeconds ?? 0);
  const headers: Record<string, string> =
    source === "github"
      ? { ...github.sign({ secret: GITHUB_SECRET, body }), "x-github-delivery": id }
      : {
          ...sign({
            id,
            timestamp,
            body,
            keys: source === "standard" ? STANDARD_SECRET : ED25519_PRIVATE_KEY,
          }),
        };
  return {
    path: `/webhooks/${source}`,
    id,
    payload,
    init: { method: "POST", headers: { ...headers, "content-type": "application/json" }, body },
  };
}

/** The same request with one byte of the body changed after signing. */
export function tampered(request: SignedRequest): SignedRequest {
  const body = request.init.body.replace('"invoice.paid"', '"invoice.paiD"');
  return { ...request, init: { ...request.init, body } };
}
