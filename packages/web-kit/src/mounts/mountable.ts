/** A Web-standard handler that knows the path it serves: what every Postel mount takes. */
export interface MountableHandler {
  (request: Request): Promise<Response>;
  /** The mount path without a trailing slash (`""` at the root). */
  readonly basePath: string;
}

/** How a mount names its surface in the errors that tell the developer how to mount it. */
export interface MountNames {
  /** The surface, e.g. `"Postel dashboard"`. */
  surface: string;
  /** The call that mounts it, with `<path>` for the mount path, e.g. `'app.use("<path>", expressDashboard(dashboard))'`. */
  mountCall: string;
}

/** The error of a mount placed at a path other than its handler's `basePath`. */
export function mountMismatch(
  handler: MountableHandler,
  mountedAt: string,
  names: MountNames,
  verb: string,
): Error {
  const base = handler.basePath || "/";
  return new Error(
    `The ${names.surface} is ${verb} "${mountedAt || "/"}" but was created with basePath "${base}": ` +
      `pass the same path to both, e.g. ${names.mountCall.replace("<path>", base)}.`,
  );
}
