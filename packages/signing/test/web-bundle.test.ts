import { existsSync } from "node:fs";
import { createContext, runInContext } from "node:vm";
import { build, type Message } from "esbuild";
import { describe, expect, test } from "vitest";
import { generateKeyPair, generateSecret, sign } from "../src/index.js";

// Bundles the entry points as a bundler for a non-Node runtime would (Cloudflare workerd without
// nodejs_compat, Vercel Edge: no "node" condition), with nothing external: any `node:` import or use
// of `Buffer` left in the graph would fail there at load time.
const root = new URL("../", import.meta.url);

async function bundleFor(entry: string, conditions: string[], format: "esm" | "iife" = "esm") {
  const result = await build({
    entryPoints: [new URL(entry, root).pathname],
    absWorkingDir: root.pathname,
    bundle: true,
    write: false,
    format,
    globalName: "bundle",
    platform: "neutral",
    conditions,
    mainFields: ["module", "main"],
    logLevel: "silent",
  }).catch((error: { errors?: Message[] }) => ({ errors: error.errors ?? [], outputFiles: [] }));
  const text = result.outputFiles?.map((file) => file.text).join("\n") ?? "";
  return { errors: result.errors.map((error) => error.text), text };
}

/** `node:` module specifiers and `Buffer` identifiers: what would not load off Node. */
function nodeOnly(text: string) {
  return {
    nodeSpecifiers: [...text.matchAll(/["'`](node:[\w/]+)["'`]/g)].map((match) => match[1]),
    bufferUses: [...text.matchAll(/\bBuffer\b/g)].length,
  };
}

const WORKER = ["worker", "browser"];

describe.each([
  ["src/inbound.ts", "the receiving gate"],
  ["src/index.ts", "the main entry (verifiers, signing helpers)"],
])("%s (%s) bundled for Web APIs alone", (entry) => {
  test("from the sources, resolving #crypto to its Web Crypto variant", async () => {
    const { errors, text } = await bundleFor(entry, ["@postel/source", ...WORKER]);
    expect(errors).toEqual([]);
    expect(text).toContain("crypto.subtle");
    expect(nodeOnly(text)).toEqual({ nodeSpecifiers: [], bufferUses: 0 });
  });

  const built = entry.replace(/^src\/(.*)\.ts$/, "dist/$1.js");
  test.skipIf(!existsSync(new URL(built, root)))(`from the build (${built}), as published`, async () => {
    const { errors, text } = await bundleFor(built, WORKER);
    expect(errors).toEqual([]);
    expect(text).toContain("crypto.subtle");
    expect(nodeOnly(text)).toEqual({ nodeSpecifiers: [], bufferUses: 0 });
  });
});

test("the check fails on a graph that imports node:crypto (control)", async () => {
  const { errors, text } = await bundleFor("src/internal/crypto-node.ts", WORKER);
  // Unresolvable on a neutral platform: the build reports it, or the specifier is left in the text.
  expect(errors.length > 0 || nodeOnly(text).nodeSpecifiers.length > 0).toBe(true);
});

test("the gate's bundle verifies in a context holding only Web APIs (no Buffer, process or require)", async () => {
  const { errors, text } = await bundleFor("src/inbound.ts", ["@postel/source", ...WORKER], "iife");
  expect(errors).toEqual([]);
  const { crypto, TextEncoder, TextDecoder, atob, btoa, URL, URLSearchParams } = globalThis;
  const context = createContext({ crypto, TextEncoder, TextDecoder, atob, btoa, URL, URLSearchParams });
  const gate = runInContext(`${text}; bundle`, context) as typeof import("../src/inbound.js");
  expect(runInContext("typeof Buffer + typeof process + typeof require", context)).toBe(
    "undefinedundefinedundefined",
  );

  const secret = generateSecret();
  const pair = generateKeyPair();
  const now = 1_700_000_000_000;
  const receiver = gate.Receiver({
    sources: { billing: { verify: [secret, pair.publicKey] } },
    clock: { now: () => now },
  });
  const body = new TextEncoder().encode('{"type":"invoice.paid"}');
  const statuses = [];
  for (const keys of [secret, pair.privateKey]) {
    const headers = sign({ id: "msg_1", timestamp: now / 1000, body, keys });
    statuses.push((await receiver.handle("billing", { body, headers }, () => undefined)).status);
  }
  const forged = sign({ id: "msg_1", timestamp: now / 1000, body, keys: generateSecret() });
  statuses.push((await receiver.handle("billing", { body, headers: forged }, () => undefined)).status);
  expect(statuses).toEqual([200, 200, 401]);
});
