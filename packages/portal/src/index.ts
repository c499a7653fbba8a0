export { PortalConfigurationError } from "./errors.js";
export {
  createPortalTokens,
  type PortalClaims,
  type PortalTokens,
  type TokenKind,
  type TokenRefusal,
} from "./tokens.js";
