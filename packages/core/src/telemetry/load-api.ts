import { createRequire } from "node:module";
import type * as otel from "@opentelemetry/api";
import { ConfigurationError } from "../errors.js";

/** The `@opentelemetry/api` module. */
export type OpenTelemetryApiModule = typeof otel;

let loaded: OpenTelemetryApiModule | undefined;

/**
 * Loads `@opentelemetry/api`, an optional peer, the first time telemetry is turned on: with
 * telemetry off it is neither installed nor loaded. A peer, not a dependency, so Postel shares the
 * app's copy: an older copy of our own would find the app's newer global providers incompatible and
 * fall back to no-ops. Loaded with `require`, since `Postel()` is synchronous; the API keeps its
 * providers and context keys in globals, so this copy and an ESM one the SDK loaded agree.
 */
export function loadOpenTelemetryApi(): OpenTelemetryApiModule {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)("@opentelemetry/api") as OpenTelemetryApiModule;
  } catch (error) {
    throw new ConfigurationError([
      {
        path: "telemetry",
        message: `needs @opentelemetry/api (${error instanceof Error ? error.message.split("\n")[0] : String(error)}): install it beside your OpenTelemetry SDK (pnpm add @opentelemetry/api), or leave telemetry out`,
      },
    ]);
  }
  return loaded;
}
