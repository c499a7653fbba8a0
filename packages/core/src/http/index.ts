/** Outbound HTTP: the keep-alive sender, its error mapping and the private-network policy. */
export { createHttpSender, HTTP_SENDER_DEFAULTS } from "./http-sender.js";
export type { HttpSender, HttpSenderOptions } from "./http-sender.js";
export { isPublicAddress } from "./ip-ranges.js";
export { mapHttpError } from "./map-error.js";
export type { MappedHttpError } from "./map-error.js";
export { assertEndpointUrlAllowed, systemLookup } from "./network-policy.js";
export type { LookupFn, NetworkPolicy } from "./network-policy.js";
