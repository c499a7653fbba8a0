import { isPostelError } from "@postel/core";
import { describe, expect, test } from "vitest";
import { createPortalTokens } from "../src/tokens.js";

const OLD = "o".repeat(32);
const NEW = "n".repeat(32);
const claims = { tenantId: "acme", actor: "ada@acme.example", expiresAt: 1_000_000 };

describe("portal tokens", () => {
  test("a link opens as a link until it expires, with its claims and a nonce of its own", async () => {
    const tokens = createPortalTokens(NEW);
    const link = await tokens.mint("link", claims);
    const opened = await tokens.open("link", link, claims.expiresAt - 1);
    expect(opened).toMatchObject(claims);
    const again = await tokens.mint("link", claims);
    expect(typeof opened === "object" && opened.nonce).not.toBe(
      ((await tokens.open("link", again, 0)) as { nonce: string }).nonce,
    );
    expect(await tokens.open("link", link, claims.expiresAt)).toBe("expired");
  });

  test("a session is never a link, nor a link a session", async () => {
    const tokens = createPortalTokens(NEW);
    expect(await tokens.open("link", await tokens.mint("session", claims), 0)).toBe("wrong-kind");
    expect(await tokens.open("session", await tokens.mint("link", claims), 0)).toBe("wrong-kind");
  });

  test("rotation: the first key signs, every key verifies; dropping a key revokes what it signed", async () => {
    const before = createPortalTokens(OLD);
    const link = await before.mint("link", claims);
    const rotated = createPortalTokens([NEW, OLD]);
    expect(await rotated.open("link", link, 0)).toMatchObject(claims);
    const signedByNew = await rotated.mint("link", claims);
    expect(await createPortalTokens(NEW).open("link", signedByNew, 0)).toMatchObject(claims);
    expect(await createPortalTokens(NEW).open("link", link, 0)).toBe("bad-signature");
  });

  test("a changed tenant, a changed signature or garbage is refused", async () => {
    const tokens = createPortalTokens(NEW);
    const [version, body, mac] = (await tokens.mint("link", claims)).split(".") as [string, string, string];
    const json = JSON.parse(Buffer.from(body, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...json, t: "globex" })).toString("base64url");
    expect(await tokens.open("link", `${version}.${forged}.${mac}`, 0)).toBe("bad-signature");
    expect(await tokens.open("link", `${version}.${body}.${mac.slice(0, -3)}AAA`, 0)).toBe("bad-signature");
    for (const garbage of [
      "",
      "v1",
      "v1..",
      "v2.a.b",
      `${version}.${body}.${mac}.x`,
      "x".repeat(5000),
      "v1.!.!",
    ])
      expect(await tokens.open("link", garbage, 0), garbage).toBe("malformed");
  });

  test("refuses a short or missing key with a typed error that says how to make one", () => {
    for (const bad of ["short", [], [NEW, "short"]]) {
      let thrown: unknown;
      try {
        createPortalTokens(bad);
      } catch (error) {
        thrown = error;
      }
      expect(isPostelError(thrown) && thrown.code).toBe("PORTAL_INVALID_OPTIONS");
      expect(String(thrown)).toContain("openssl rand");
    }
  });
});
