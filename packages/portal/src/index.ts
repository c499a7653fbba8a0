export { PortalConfigurationError } from "./errors.js";
export {
  createPortalTokens,
  type PortalClaims,
  type PortalTokens,
  type TokenKind,
  type TokenRefusal,
} from "./tokens.js";
export {
  type PortalOutbound,
  PortalLimitError,
  RECOVER_LIMIT,
  type TenantDelivery,
  type TenantEndpointInput,
  type TenantLimits,
  type TenantScope,
  tenantScope,
} from "./scope.js";
export { API_ROUTES } from "./api.js";
export { createPortal, type Portal, type PortalCaller, type PortalOptions } from "./create-portal.js";
