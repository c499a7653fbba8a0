export { PortalConfigurationError } from "./errors.js";
export {
  createPortalTokens,
  type PortalClaims,
  type PortalTokens,
  type TokenKind,
  type TokenRefusal,
} from "./tokens.js";
export {
  DEFAULT_LIMITS,
  type EventTypeInfo,
  PORTAL_ACTIONS,
  type PortalAction,
  type PortalOutbound,
  PortalLimitError,
  RECOVER_LIMIT,
  type ScopeCaller,
  type TenantDelivery,
  type TenantDeliveryRecord,
  type TenantEndpoint,
  type TenantEndpointInput,
  type TenantLimits,
  type TenantMessage,
  type TenantScope,
  tenantEndpoint,
  tenantMessage,
  tenantScope,
} from "./scope.js";
export { PAGE_ROUTES } from "./pages/router.js";
export { type LinkOptions, SESSION_COOKIE } from "./session.js";
export { THEME_COLORS, type ThemeOptions } from "./theme.js";
export { API_ROUTES } from "./api.js";
export { createPortal, type Portal, type PortalCaller, type PortalOptions } from "./create-portal.js";
export { type OpenAPIObject, type PortalOpenApiOptions, portalOpenApi } from "./openapi.js";
