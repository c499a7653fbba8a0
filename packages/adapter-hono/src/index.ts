/**
 * `@postel/adapter-hono`: receive verified webhooks in Hono. Loads only `@postel/core/inbound`.
 */
export { webhook } from "./webhook.js";
export type { HonoWebhookHandler, HonoWebhookOptions, WebhookEnv } from "./webhook.js";
