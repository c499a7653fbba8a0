import type { Duration } from "../duration.js";

/** Circuit-breaker options (globally or per endpoint). */
export interface CircuitBreakerOptions {
  /** Failure ratio over `window` that opens the circuit, in (0, 1]. Default 0.5. */
  threshold?: number;
  /** How long the circuit stays open before one probe decides. Default `"5m"`. */
  cooldown?: Duration;
  /** Rolling window the ratio is measured over. Default `"1m"`. */
  window?: Duration;
  /** Attempts needed in the window before the ratio counts. Default 20. */
  minimumVolume?: number;
}

/**
 * Auto-disable options (globally or per endpoint). Auto-disable takes an endpoint that has been
 * broken for long out of rotation (its deliveries are held until `enable(id)`); a burst of failures
 * never disables it. The circuit breaker acts first: with a breaker, only an endpoint whose circuit
 * is open (it just opened, or a probe just failed) is considered, so with the defaults a dead
 * endpoint is disabled at the first failed probe after about an hour.
 */
export interface AutoDisableOptions {
  /**
   * Failure ratio, in (0, 1], that the whole `window` and also its oldest part (its first tenth, or
   * two breaker cooldowns, whichever is longer) must reach: the endpoint was already failing a whole
   * window ago. Default 0.9.
   */
  failureRate?: number;
  /** How long the endpoint must have been failing. Default `"1h"`. */
  window?: Duration;
  /**
   * Attempts needed in the window before the ratio counts. Default 20. With a breaker it is capped
   * at `window / cooldown` (an open circuit lets one probe through per cooldown).
   */
  minAttempts?: number;
}

/**
 * Limits on the requests sent to one endpoint, enforced across every instance. Set here they are
 * the default of every endpoint; an endpoint's own `maxInFlight` / `rateLimit` replaces them.
 */
export interface EndpointLimitOptions {
  /** Most requests in flight to one endpoint at once, an integer from 1 to 10,000. Default: no limit beyond its fair share. */
  maxInFlight?: number;
  /**
   * Most requests per second to one endpoint, from 0.01 to 100,000; fractions allowed (`0.5` = one
   * request every 2 s). Default: no limit.
   */
  rateLimit?: number;
}
