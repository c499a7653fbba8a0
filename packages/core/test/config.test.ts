import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../src/errors.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";

describe("Postel() options", () => {
  test("lists every bad field in one ConfigurationError, with paths and fixes", () => {
    let error: unknown;
    try {
      Postel({
        outbound: {
          storage: InMemoryStorage(),
          circuitBreaker: { threshold: 2, cooldown: "5 minutes" as never },
          workers: { concurrency: 0, pollIntervall: "1s" } as never,
          retryPolicy: { maxAttempts: 3 } as never,
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    const { issues, code, message } = error as ConfigurationError;
    expect(code).toBe("INVALID_CONFIGURATION");
    expect(issues.map((i) => i.path).sort()).toEqual([
      "outbound.circuitBreaker.cooldown",
      "outbound.circuitBreaker.threshold",
      "outbound.retryPolicy",
      "outbound.workers.concurrency",
      "outbound.workers.pollIntervall",
    ]);
    expect(message).toContain('"30s"');
    expect(message).toContain("unknown option");
  });

  test("refuses something that is not a storage", () => {
    expect(() => Postel({ outbound: { storage: {} as never } })).toThrow(/must be a Storage/);
  });

  test("accepts the seed's examples as written", () => {
    expect(() =>
      Postel({
        outbound: {
          storage: InMemoryStorage(),
          circuitBreaker: { threshold: 0.5, cooldown: "5m" },
          autoDisable: { failureRate: 0.9, window: "1h", minAttempts: 20 },
        },
      }),
    ).not.toThrow();
  });
});
