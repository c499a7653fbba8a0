export { postelWebhooks } from "./postel-webhooks.js";
export type { PostelWebhooksOptions, WebhookRoute } from "./postel-webhooks.js";
export { webhookHandler } from "./webhook-handler.js";
export type { FastifyWebhookHandler } from "./webhook-handler.js";
