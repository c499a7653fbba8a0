import { createHmac } from "node:crypto";
import { InvalidKeyError } from "../errors.js";

/**
 * Normalises a provider's `secret | secrets` pair into key bytes. Provider secrets are used as the
 * literal UTF-8 string (Stripe's `whsec_` included), unlike Standard Webhooks secrets.
 */
export function providerSecrets(
  provider: string,
  options: Readonly<Record<string, unknown>>,
  singular: string,
  plural: string,
): Buffer[] {
  const one = options[singular];
  const many = options[plural];
  if (one !== undefined && many !== undefined) {
    throw new InvalidKeyError(`${provider}(): pass either ${singular} or ${plural}, not both.`);
  }
  const list: readonly unknown[] = one !== undefined ? [one] : Array.isArray(many) ? many : [];
  if (list.length === 0) {
    throw new InvalidKeyError(
      `${provider}(): no secret given; pass { ${singular} } (or { ${plural}: [...] } during a rotation).`,
    );
  }
  return list.map((secret, index) => {
    if (typeof secret !== "string" || secret === "") {
      const name = one !== undefined ? singular : `${plural}[${index}]`;
      throw new InvalidKeyError(`${provider}(): ${name} must be a non-empty string.`);
    }
    return Buffer.from(secret, "utf8");
  });
}

/** HMACs `parts` with every key and returns each digest as the encoded text the provider sends. */
export function hmacEach(
  keys: readonly Buffer[],
  algorithm: "sha1" | "sha256",
  encoding: "hex" | "base64",
  parts: readonly (string | Uint8Array)[],
): Buffer[] {
  return keys.map((key) => {
    const hmac = createHmac(algorithm, key);
    for (const part of parts) hmac.update(part);
    return Buffer.from(hmac.digest(encoding));
  });
}
