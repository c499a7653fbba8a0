/**
 * `@postel/adapter-next`: receive verified webhooks in Next.js route handlers (App Router) and API
 * routes (Pages Router). Loads only `@postel/signing/inbound`, and nothing from `next` itself.
 */
export { webhookApiRoute } from "./webhook-api-route.js";
export type { ApiRouteRequest } from "./webhook-api-route.js";
export { webhookRoute } from "./webhook-route.js";
export type { NextWebhookOptions, RouteWebhookHandler } from "./webhook-route.js";
