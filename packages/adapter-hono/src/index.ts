/**
 * `@postel/adapter-hono`: receive verified webhooks in Hono. Loads only `@postel/signing/inbound`.
 */
export { webhook } from "./webhook.js";
export type { HonoWebhookHandler, HonoWebhookOptions, WebhookEnv } from "./webhook.js";
