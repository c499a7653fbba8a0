import { hmacKey, utf8 } from "#crypto";
import { InvalidKeyError } from "../errors.js";
import type { HmacKey } from "./crypto.js";

/**
 * Normalises a provider's `secret | secrets` pair into HMAC keys. Provider secrets are used as the
 * literal UTF-8 string (Stripe's `whsec_` included), unlike Standard Webhooks secrets.
 */
export function providerSecrets(
  provider: string,
  options: Readonly<Record<string, unknown>>,
  singular: string,
  plural: string,
): HmacKey[] {
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
    return hmacKey(utf8(secret));
  });
}
