export { createDashboard, DashboardConfigurationError } from "./create-dashboard.js";
export type { Dashboard, DashboardOptions } from "./create-dashboard.js";
export { DashboardGrantError } from "./grant.js";
export type { AuthorizeVerdict, DashboardGrant, DashboardRole } from "./grant.js";
export { CONTENT_SECURITY_POLICY } from "./respond.js";
export type { DashboardPostel } from "./ops.js";
export type { DeadLetter, EndpointStats, OutboundStats, Page } from "@postel/core";
