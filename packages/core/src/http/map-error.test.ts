import { describe, expect, it } from "vitest";
import type { HttpErrorCode } from "../classify-response.js";
import { PrivateAddressRefusedError } from "./guarded-connector.js";
import { mapHttpError } from "./map-error.js";

function coded(code: string, message = `failed with ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

const rows: ReadonlyArray<readonly [errorCode: string, expected: HttpErrorCode]> = [
  ["UND_ERR_CONNECT_TIMEOUT", "CONNECT_TIMEOUT"],
  ["ETIMEDOUT", "CONNECT_TIMEOUT"],
  ["ECONNREFUSED", "CONNECTION_REFUSED"],
  ["ECONNRESET", "CONNECTION_RESET"],
  ["EPIPE", "CONNECTION_RESET"],
  ["UND_ERR_SOCKET", "CONNECTION_RESET"],
  ["UND_ERR_CLOSED", "CONNECTION_RESET"],
  ["ENOTFOUND", "DNS_FAILURE"],
  ["EAI_AGAIN", "DNS_FAILURE"],
  ["EAI_NONAME", "DNS_FAILURE"],
  ["UND_ERR_HEADERS_TIMEOUT", "TIMEOUT"],
  ["UND_ERR_BODY_TIMEOUT", "TIMEOUT"],
  ["ERR_TLS_CERT_ALTNAME_INVALID", "TLS_ERROR"],
  ["ERR_SSL_WRONG_VERSION_NUMBER", "TLS_ERROR"],
  ["CERT_HAS_EXPIRED", "TLS_ERROR"],
  ["DEPTH_ZERO_SELF_SIGNED_CERT", "TLS_ERROR"],
  ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "TLS_ERROR"],
  ["SELF_SIGNED_CERT_IN_CHAIN", "TLS_ERROR"],
  ["PRIVATE_ADDRESS_NOT_ALLOWED", "PRIVATE_ADDRESS"],
  ["EHOSTUNREACH", "NETWORK_ERROR"],
  ["UND_ERR_INVALID_ARG", "NETWORK_ERROR"],
];

describe("mapHttpError", () => {
  it.each(rows)("maps %s to %s", (errorCode, expected) => {
    expect(mapHttpError(coded(errorCode)).code).toBe(expected);
  });

  it("maps an AbortSignal.timeout() abort to TIMEOUT", () => {
    expect(
      mapHttpError(new DOMException("The operation was aborted due to timeout", "TimeoutError")).code,
    ).toBe("TIMEOUT");
  });

  it("finds the code deep in a cause chain", () => {
    const wrapped = new Error("fetch failed", {
      cause: new Error("socket", { cause: coded("ECONNREFUSED") }),
    });
    expect(mapHttpError(wrapped).code).toBe("CONNECTION_REFUSED");
  });

  it("finds the code inside an AggregateError from happy-eyeballs connects", () => {
    const aggregate = new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")], "");
    expect(mapHttpError(aggregate).code).toBe("CONNECTION_REFUSED");
  });

  it("survives a cause cycle", () => {
    const first = new Error("a");
    const second = new Error("b", { cause: first });
    Object.assign(first, { cause: second });
    expect(mapHttpError(first).code).toBe("NETWORK_ERROR");
  });

  it("maps things that are not errors to NETWORK_ERROR", () => {
    expect(mapHttpError("boom")).toEqual({ code: "NETWORK_ERROR", message: "The request failed (boom)." });
    expect(mapHttpError(undefined).code).toBe("NETWORK_ERROR");
  });

  it("keeps the underlying message so an operator can see what happened", () => {
    const { message } = mapHttpError(coded("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:9"));
    expect(message).toBe("The receiver refused the connection (connect ECONNREFUSED 127.0.0.1:9).");
  });

  it("passes the network policy's explanation through unchanged", () => {
    const mapped = mapHttpError(new PrivateAddressRefusedError("hooks.example.com", "10.0.0.5"));
    expect(mapped.code).toBe("PRIVATE_ADDRESS");
    expect(mapped.message).toContain('"hooks.example.com" (resolves to 10.0.0.5)');
    expect(mapped.message).toContain("allowPrivateNetworks: true");
  });
});
