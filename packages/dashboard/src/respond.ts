import { createResponder } from "@postel/web-kit";

/** Every response of the dashboard, with its security headers: it is never framed. */
export const responder = createResponder();

/**
 * The Content-Security-Policy of every response: only the dashboard's own script and stylesheet,
 * no inline code, no framing, forms only to itself.
 */
export const CONTENT_SECURITY_POLICY = responder.contentSecurityPolicy;
