import { describe, expect, test } from "vitest";
import {
  InvalidArgumentError,
  InvalidKeyError,
  isPostelError,
  PostelError,
  WebhookVerificationError,
} from "./errors.js";

describe("PostelError", () => {
  test("carries a stable code and is an Error", () => {
    const error = new PostelError("SOMETHING_BROKE", "what and how to fix it");
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe("SOMETHING_BROKE");
    expect(error.name).toBe("PostelError");
    expect(error.message).toBe("what and how to fix it");
  });

  test("subclasses keep their family's code, name and the base class", () => {
    const verification = new WebhookVerificationError("SIGNATURE_INVALID", "no match", "webhook-signature");
    expect(verification).toBeInstanceOf(PostelError);
    expect(verification.name).toBe("WebhookVerificationError");
    expect(verification.header).toBe("webhook-signature");
    expect(new InvalidKeyError("bad").code).toBe("INVALID_KEY");
    expect(new InvalidArgumentError("bad").code).toBe("INVALID_ARGUMENT");
  });
});

describe("isPostelError", () => {
  test("recognises every subclass", () => {
    expect(isPostelError(new WebhookVerificationError("MISSING_HEADER", "x"))).toBe(true);
    expect(isPostelError(new InvalidKeyError("x"))).toBe(true);
  });

  test("recognises an error from a duplicate install through the registered symbol brand", () => {
    // A second copy of the package has its own class, so instanceof fails but the brand does not.
    class ForeignPostelError extends Error {
      readonly code = "SIGNATURE_INVALID";
      constructor() {
        super("from another copy");
        Object.defineProperty(this, Symbol.for("postel.error"), { value: true });
      }
    }
    const foreign = new ForeignPostelError();
    expect(foreign instanceof PostelError).toBe(false);
    expect(isPostelError(foreign)).toBe(true);
  });

  test("rejects look-alikes without the brand", () => {
    expect(isPostelError(Object.assign(new Error("x"), { code: "SIGNATURE_INVALID" }))).toBe(false);
    expect(isPostelError({ code: "X", [Symbol("postel.error")]: true })).toBe(false);
    expect(isPostelError(null)).toBe(false);
    expect(isPostelError("PostelError")).toBe(false);
  });
});
