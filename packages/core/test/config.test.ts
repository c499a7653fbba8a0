import { describe, expect, test } from "vitest";
import { parsePostelOptions } from "../src/config/parse.js";
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

  test("a missing storage says what a storage is and how to create one", () => {
    expect(() => Postel({ outbound: {} as never })).toThrow(
      /outbound\.storage: is required: the database Postel keeps its outbox in\. Pass InMemoryStorage\(\)/,
    );
  });

  test.each([
    "circuitBreaker",
    "autoDisable",
    "limits",
    "workers",
    "http",
    "signing",
    "retryPolicies",
    "filters",
    "transforms",
  ])("refuses an array as outbound.%s (it would silently mean the defaults)", (option) => {
    let error: unknown;
    try {
      Postel({ outbound: { storage: InMemoryStorage(), [option]: [] } as never });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).issues).toEqual([
      { path: `outbound.${option}`, message: `${option} must be an object, not an array or a primitive` },
    ]);
  });

  test("refuses something that is not a storage", () => {
    expect(() => Postel({ outbound: { storage: {} as never } })).toThrow(/must be a Storage/);
  });

  test("outbound.limits default to no limit and keep the values given", () => {
    const parse = (limits?: object) =>
      parsePostelOptions({ outbound: { storage: InMemoryStorage(), ...(limits && { limits }) } }, () => "w")
        .outbound?.limits;
    expect(parse()).toEqual({ maxInFlight: null, rateLimit: null });
    expect(parse({ maxInFlight: 10_000, rateLimit: 0.01 })).toEqual({ maxInFlight: 10_000, rateLimit: 0.01 });
    expect(parse({ rateLimit: 100_000 })).toEqual({ maxInFlight: null, rateLimit: 100_000 });
  });

  test.each([
    ["maxInFlight", 0, /from 1 to 10000/],
    ["maxInFlight", 10_001, /from 1 to 10000/],
    ["maxInFlight", 2.5, /whole number/],
    ["maxInFlight", "8", /from 1 to 10000/],
    ["rateLimit", 0, /from 0\.01 to 100000/],
    ["rateLimit", 100_001, /from 0\.01 to 100000/],
    ["rateLimit", Number.POSITIVE_INFINITY, /from 0\.01 to 100000/],
    ["rateLimit", Number.NaN, /from 0\.01 to 100000/],
    ["rateLimit", null, /leave it out for no limit/],
  ])("refuses outbound.limits.%s = %s with a ConfigurationError giving the range", (key, value, fix) => {
    const error = (() => {
      try {
        Postel({ outbound: { storage: InMemoryStorage(), limits: { [key]: value } as never } });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    const { issues } = error as ConfigurationError;
    expect(issues).toEqual([{ path: `outbound.limits.${key}`, message: expect.stringMatching(fix) }]);
    expect(issues[0]?.message).toMatch(/leave it out for no limit/);
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
