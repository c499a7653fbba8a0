export {
  InvalidArgumentError,
  InvalidKeyError,
  isPostelError,
  PostelError,
  WebhookVerificationError,
} from "./errors.js";
export type { WebhookVerificationErrorCode } from "./errors.js";
export { generateSecret, MIN_SECRET_BYTES, SECRET_PREFIX } from "./secret.js";
export {
  generateKeyPair,
  PRIVATE_KEY_PREFIX,
  PUBLIC_KEY_PREFIX,
  publicKeyFromPrivate,
} from "./ed25519-keys.js";
export type { Ed25519KeyPair } from "./ed25519-keys.js";
export { constantTimeEqual } from "./constant-time.js";
export { readHeader } from "./headers.js";
export type { HeaderGetter, HeadersLike, ReadHeaderOptions } from "./headers.js";
export { DEFAULT_TOLERANCE_MS } from "./timestamp.js";
export { createSigner, sign } from "./sign.js";
export type { SignInput, Signer, WebhookHeaders } from "./sign.js";
export { createVerifier, verify } from "./verify.js";
export type {
  StandardWebhooksVerifier,
  StandardWebhookVerification,
  VerifierOptions,
  VerifyOptions,
} from "./verify.js";
export type { VerifiedWebhook, Verifier, WebhookRequest } from "./verifier.js";
export { stripe } from "./providers/stripe.js";
export type { StripeOptions } from "./providers/stripe.js";
export { github } from "./providers/github.js";
export type { GitHubOptions } from "./providers/github.js";
export { shopify } from "./providers/shopify.js";
export type { ShopifyOptions } from "./providers/shopify.js";
export { slack } from "./providers/slack.js";
export type { SlackOptions } from "./providers/slack.js";
export { twilio } from "./providers/twilio.js";
export type { TwilioOptions, TwilioParams } from "./providers/twilio.js";
export { verifyAsync } from "./verify.js";
export { SyncCryptoUnavailableError } from "./errors.js";
