import { describe, expect, test } from "vitest";
import {
  BodyTooLargeError,
  contentSecurityPolicy,
  createCsrf,
  createResponder,
  frameAncestorsProblem,
  fromBase64Url,
  guardedHandler,
  readBodyText,
  toBase64Url,
} from "../src/index.js";
import { isWellFormedHost, pathOfTarget } from "../src/node.js";

describe("what a mount accepts as the URL's host and path", () => {
  test("hosts: names, IPv4, bracketed IPv6, each with an optional port; nothing that could carry a path", () => {
    for (const good of [
      "example.com",
      "localhost:3000",
      "127.0.0.1:8080",
      "[::1]:443",
      "my_service",
      "a.b.c.",
    ])
      expect(isWellFormedHost(good), good).toBe(true);
    for (const bad of [
      undefined,
      "",
      "example.com/admin",
      "example.com?x",
      "[::1",
      "a b",
      "@evil",
      "h:1:2",
      "x#y",
    ])
      expect(isWellFormedHost(bad), String(bad)).toBe(false);
  });

  test("targets: origin-form as sent, absolute-form reduced to its path, anything else refused", () => {
    expect(pathOfTarget("/postel/x?y=1")).toBe("/postel/x?y=1");
    expect(pathOfTarget("http://elsewhere/postel/x?y=1")).toBe("/postel/x?y=1");
    for (const bad of [undefined, "*", "//evil/postel", "example.com:443", "postel"])
      expect(pathOfTarget(bad)).toBeNull();
  });
});

describe("readBodyText", () => {
  test("refuses a declared length over the limit before reading, and a stream that grows past it", async () => {
    const declared = new Request("http://x/", {
      method: "POST",
      body: "abc",
      headers: { "content-length": "9999" },
    });
    await expect(readBodyText(declared, 10)).rejects.toBeInstanceOf(BodyTooLargeError);
    const streamed = new Request("http://x/", { method: "POST", body: "x".repeat(11) });
    await expect(readBodyText(streamed, 10)).rejects.toBeInstanceOf(BodyTooLargeError);
    await expect(readBodyText(new Request("http://x/", { method: "POST", body: "é=1" }), 10)).resolves.toBe(
      "é=1",
    );
  });
});

describe("responses", () => {
  test("frame-ancestors none by default (with X-Frame-Options), or exactly the origins allowed", () => {
    const closed = createResponder().plain(404, "Not found");
    expect(closed.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(closed.headers.get("x-frame-options")).toBe("DENY");
    const framed = createResponder({ frameAncestors: ["'self'", "https://app.example.com"] }).plain(404, "x");
    expect(framed.headers.get("content-security-policy")).toContain(
      "frame-ancestors 'self' https://app.example.com;",
    );
    expect(framed.headers.get("x-frame-options")).toBeNull();
    expect(contentSecurityPolicy()).toBe(closed.headers.get("content-security-policy"));
  });

  test("frameAncestorsProblem refuses what would widen or break the policy", () => {
    expect(frameAncestorsProblem(["'self'", "https://a.example:8443"])).toBeNull();
    for (const bad of [["*"], ["https://a.example/path"], ["https://a.example; script-src *"], "'self'", [1]])
      expect(frameAncestorsProblem(bad), JSON.stringify(bad)).not.toBeNull();
  });
});

describe("guardedHandler", () => {
  const responder = createResponder();
  const handler = (identify: () => Promise<string | null | Response>, errors: unknown[] = []) =>
    guardedHandler<string>({
      basePath: "/p",
      methods: ["GET", "POST"],
      responder,
      identify,
      serve: async (request, caller, path) => {
        if (request.method === "POST") await readBodyText(request, 4);
        return responder.plain(200, `${caller} ${path}`);
      },
      onError: (error) => errors.push(error),
    });

  test("refuses outside the base path, other methods, nobody, and throws, each plainly", async () => {
    const errors: unknown[] = [];
    const open = handler(async () => "t1");
    expect((await open(new Request("http://x/other"))).status).toBe(404);
    expect((await open(new Request("http://x/p/a", { method: "PUT" }))).headers.get("allow")).toBe(
      "GET, POST",
    );
    expect(await (await open(new Request("http://x/p/a"))).text()).toBe("t1 /a\n");
    expect((await handler(async () => null)(new Request("http://x/p"))).status).toBe(403);
    const failing = handler(async () => {
      throw new Error("boom");
    }, errors);
    const answer = await failing(new Request("http://x/p"));
    expect([answer.status, await answer.text()]).toEqual([500, "Internal error\n"]);
    expect(errors).toHaveLength(1);
    const big = await open(new Request("http://x/p/a", { method: "POST", body: "12345" }));
    expect(big.status).toBe(413);
  });
});

describe("CSRF tokens", () => {
  test("a token verifies only with its session and key; base64url round-trips", async () => {
    const csrf = createCsrf({ cookieName: "c", secret: "k".repeat(32) });
    const first = await csrf.issue(new Request("http://x/"), "/");
    const cookie = first.setCookie!.split(";")[0]!;
    const post = (token: string, headers: Record<string, string> = {}) =>
      csrf.check(
        new Request("http://x/", { method: "POST", headers: { cookie, ...headers } }),
        new URLSearchParams({ _csrf: token }),
      );
    expect(await post(first.token)).toBeNull();
    expect(await post(`${first.token.slice(0, -2)}AA`)).toBe("bad-token");
    expect(await post(first.token, { "sec-fetch-site": "cross-site" })).toBe("cross-site");
    const other = createCsrf({ cookieName: "c", secret: "j".repeat(32) });
    expect(
      await other.check(
        new Request("http://x/", { method: "POST", headers: { cookie } }),
        new URLSearchParams({ _csrf: first.token }),
      ),
    ).toBe("bad-token");
    const bytes = crypto.getRandomValues(new Uint8Array(33));
    expect(fromBase64Url(toBase64Url(bytes))).toEqual(bytes);
    expect(fromBase64Url("a+b")).toBeNull();
  });
});
