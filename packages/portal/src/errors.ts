import { PostelError } from "@postel/core";

/** The portal was given options it cannot run with. Code `PORTAL_INVALID_OPTIONS`. */
export class PortalConfigurationError extends PostelError {}
