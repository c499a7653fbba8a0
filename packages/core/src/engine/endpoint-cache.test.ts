import { describe, expect, test } from "vitest";
import { ManualClock } from "../clock.js";
import { parsePostelOptions } from "../config/parse.js";
import { InMemoryStorage } from "../storage/in-memory-storage.js";
import { newEndpoint } from "../testing/conformance/fixtures.js";
import { EndpointCache } from "./endpoint-cache.js";

function cacheWith(limits: object = {}) {
  const storage = InMemoryStorage();
  const clock = new ManualClock();
  const { outbound } = parsePostelOptions({ outbound: { storage, limits } }, () => "worker");
  return { storage, clock, cache: new EndpointCache(outbound!, clock) };
}

describe("EndpointCache limits", () => {
  test("each limit is the endpoint's own, else outbound.limits's, else null", async () => {
    const { storage, cache } = cacheWith({ maxInFlight: 16 });
    const own = newEndpoint({ maxInFlight: 2, rateLimit: 0.5 });
    const inherits = newEndpoint();
    await storage.createEndpoint(own);
    await storage.createEndpoint(inherits);
    const compiled = await cache.fresh();
    expect(compiled.get(own.id)?.limits).toEqual({ maxInFlight: 2, rateLimit: 0.5 });
    expect(compiled.get(inherits.id)?.limits).toEqual({ maxInFlight: 16, rateLimit: null });
  });

  test("an update of the limits reaches the compiled endpoint, even within the same millisecond", async () => {
    const { storage, clock, cache } = cacheWith({ rateLimit: 100 });
    const endpoint = newEndpoint({ createdAt: clock.now(), updatedAt: clock.now() });
    await storage.createEndpoint(endpoint);
    expect((await cache.fresh()).get(endpoint.id)?.limits).toEqual({ maxInFlight: null, rateLimit: 100 });

    await storage.updateEndpoint(endpoint.id, { maxInFlight: 3, rateLimit: 1.5 }, clock.now());
    expect((await cache.fresh()).get(endpoint.id)?.limits).toEqual({ maxInFlight: 3, rateLimit: 1.5 });
    clock.advance("1s");
    await storage.updateEndpoint(endpoint.id, { rateLimit: null }, clock.now());
    expect((await cache.fresh()).get(endpoint.id)?.limits).toEqual({ maxInFlight: 3, rateLimit: 100 });
  });
});
