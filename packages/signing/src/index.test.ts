import { describe, expect, expectTypeOf, test } from "vitest";
import * as api from "./index.js";
import {
  createSigner,
  createVerifier,
  github,
  type HeadersLike,
  type StandardWebhookVerification,
  shopify,
  slack,
  stripe,
  twilio,
  type VerifiedWebhook,
  type Verifier,
  type WebhookHeaders,
} from "./index.js";

describe("public API", () => {
  test("exports exactly the documented runtime names", () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        "DEFAULT_TOLERANCE_MS",
        "InvalidArgumentError",
        "InvalidKeyError",
        "MIN_SECRET_BYTES",
        "PRIVATE_KEY_PREFIX",
        "PUBLIC_KEY_PREFIX",
        "PostelError",
        "SECRET_PREFIX",
        "SyncCryptoUnavailableError",
        "WebhookVerificationError",
        "constantTimeEqual",
        "createSigner",
        "createVerifier",
        "generateKeyPair",
        "generateSecret",
        "github",
        "isPostelError",
        "publicKeyFromPrivate",
        "readHeader",
        "shopify",
        "sign",
        "slack",
        "stripe",
        "twilio",
        "verify",
        "verifyAsync",
      ].sort(),
    );
  });

  test("every scheme is a Verifier with both verify and verifyAsync, that core's gate can hold in one list", () => {
    const verifiers: Verifier[] = [
      createVerifier(api.generateSecret()),
      stripe({ secret: "whsec_x" }),
      github({ secret: "x" }),
      shopify({ secret: "x" }),
      slack({ signingSecret: "x" }),
      twilio({ authToken: "x", url: "https://example.com/" }),
    ];
    expect(verifiers.every((verifier) => typeof verifier.verifyAsync === "function")).toBe(true);
    expect(verifiers.map((verifier) => verifier.scheme)).toEqual([
      "standard-webhooks",
      "stripe",
      "github",
      "shopify",
      "slack",
      "twilio",
    ]);
  });

  test("types: signed headers can be sent with fetch and read back as HeadersLike", () => {
    expectTypeOf<WebhookHeaders>().toExtend<Record<string, string>>();
    expectTypeOf<WebhookHeaders>().toExtend<HeadersLike>();
    expectTypeOf<Headers>().toExtend<HeadersLike>();
    expectTypeOf(createSigner).returns.toHaveProperty("sign");
  });

  test("types: the Standard Webhooks result narrows the common one", () => {
    expectTypeOf<StandardWebhookVerification>().toExtend<VerifiedWebhook>();
    expectTypeOf<StandardWebhookVerification["id"]>().toEqualTypeOf<string>();
    expectTypeOf<StandardWebhookVerification["version"]>().toEqualTypeOf<"v1" | "v1a">();
    expectTypeOf(api.verifyAsync).returns.toEqualTypeOf<Promise<StandardWebhookVerification>>();
    expectTypeOf<ReturnType<typeof createVerifier>["verifyAsync"]>().returns.toEqualTypeOf<
      Promise<StandardWebhookVerification>
    >();
    // @ts-expect-error: a provider needs either secret or secrets, not neither.
    expect(() => github({})).toThrow(api.InvalidKeyError);
  });
});
