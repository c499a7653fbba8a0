export { webhook } from "./webhook.js";
export type { ExpressWebhookHandler, WebhookOptions } from "./webhook.js";
