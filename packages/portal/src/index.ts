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
