export { BodyTooLargeError, MAX_BODY_BYTES, readBodyText } from "./body.js";
export {
  type Csrf,
  type CsrfOptions,
  type CsrfRefusal,
  cookieValue,
  createCsrf,
  fromBase64Url,
  isCrossSite,
  toBase64Url,
} from "./csrf.js";
export {
  badge,
  csrfField,
  formatTime,
  jsonBlock,
  linkTo,
  nextPageLink,
  pageSize,
  parseUtc,
  postButton,
  relative,
  time,
  utcField,
} from "./format.js";
export { basePathProblem, type GuardOptions, guardedHandler } from "./guard.js";
export { escapeHtml, Html, html, trustedHtml } from "./html.js";
export type { MountableHandler, MountNames } from "./mounts/mountable.js";
export {
  contentSecurityPolicy,
  createResponder,
  frameAncestorsProblem,
  type Responder,
  type ResponderOptions,
} from "./respond.js";
export { BASE_STYLESHEET } from "./stylesheet.js";
