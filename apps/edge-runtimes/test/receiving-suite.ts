import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Seen } from "../fixtures/sources.js";
import { type Bundle, bundle } from "./bundle.js";
import { newId, type SignedRequest, type Source, signed, tampered } from "./requests.js";
import type { Running, Runtime } from "./runtimes.js";

/** A fixture app and what its answers look like. */
interface Fixture {
  title: string;
  file: string;
  /** The Hono app's route answers `{ received: payload }`; the fetch seam answers the gate's `{ ok: true }`. */
  answersWithPayload: boolean;
}

const SCHEME: Record<Source, string> = {
  standard: "standard-webhooks",
  ed25519: "standard-webhooks",
  github: "github",
};

/**
 * The receiving checks, run against each fixture bundled for `runtime` and started in it: signed
 * requests of every scheme reach the handler once with the parsed body, forged or stale ones never
 * do. A fixture that cannot be bundled, or a runtime that cannot start, fails every check with why.
 */
export function receivingSuite(runtime: Runtime, options: { honoFixture?: string } = {}): void {
  const fixtures: Fixture[] = [
    {
      title: "Hono app (@postel/adapter-hono webhook())",
      file: options.honoFixture ?? "hono-app.ts",
      answersWithPayload: true,
    },
    {
      title: "plain fetch worker (handleRequest)",
      file: "fetch-seam.ts",
      answersWithPayload: false,
    },
  ];

  describe(runtime.target.name, () => {
    for (const fixture of fixtures) describe(fixture.title, () => fixtureChecks(runtime, fixture));
  });
}

function fixtureChecks(runtime: Runtime, fixture: Fixture): void {
  const name = runtime.target.name;
  let built: Bundle | undefined;
  let running: Running | undefined;
  let failure: Error | undefined;

  beforeAll(async () => {
    try {
      built = await bundle(fixture.file, runtime.target);
    } catch (error) {
      failure = new Error(`Bundling fixtures/${fixture.file} for ${name} failed: ${messageOf(error)}`);
      return;
    }
    try {
      running = await runtime.start(built);
    } catch (error) {
      failure = new Error(
        `${name} could not run the bundle of fixtures/${fixture.file}: ${messageOf(error)}`,
      );
    }
  }, 60_000);
  afterAll(async () => {
    await running?.close();
    built?.remove();
  });

  const app = (): Running => {
    if (failure || !running) throw failure ?? new Error(`${name}: the fixture did not start`);
    return running;
  };
  const seen = async (id: string): Promise<Seen[]> => {
    const answer = await app().fetch("/seen");
    expect(answer.status).toBe(200);
    return (answer.body as Seen[]).filter((entry) => entry.id === id);
  };
  const expectHandledOnce = async (source: Source, request: SignedRequest) => {
    const answer = await app().fetch(request.path, request.init);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    if (fixture.answersWithPayload) expect(answer.body).toEqual({ received: request.payload });
    expect(await seen(request.id)).toEqual([
      { source, id: request.id, scheme: SCHEME[source], payload: request.payload },
    ]);
  };

  test("the bundle imports no Node built-in", () => {
    if (!built) throw failure;
    expect(built.nodeImports, `fixtures/${fixture.file} bundled for ${name} imports them`).toEqual([]);
  });

  test("a v1 (HMAC) signed webhook is answered 200 and the handler gets the parsed body", async () => {
    await expectHandledOnce("standard", signed("standard", newId(name)));
  });

  test("a body changed after signing is refused 401 and never reaches the handler", async () => {
    const request = tampered(signed("standard", newId(name)));
    const answer = await app().fetch(request.path, request.init);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: { code: "SIGNATURE_INVALID" } });
    expect(await seen(request.id)).toEqual([]);
  });

  test("a timestamp older than the tolerance is refused with TIMESTAMP_OUT_OF_WINDOW", async () => {
    const request = signed("standard", newId(name), { ageSeconds: 600 });
    const answer = await app().fetch(request.path, request.init);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: { code: "TIMESTAMP_OUT_OF_WINDOW" } });
    expect(answer.headers.get("x-postel-error")).toBe("TIMESTAMP_OUT_OF_WINDOW");
    expect(await seen(request.id)).toEqual([]);
  });

  test("a v1a (Ed25519) signed webhook is accepted with the whpk_ public key", async () => {
    await expectHandledOnce("ed25519", signed("ed25519", newId(name)));
  });

  test("a GitHub-signed webhook (x-hub-signature-256) is accepted", async () => {
    await expectHandledOnce("github", signed("github", newId(name)));
  });

  test("the same webhook id twice runs the handler once, the second answered as a duplicate", async () => {
    for (const source of ["standard", "ed25519", "github"] as const) {
      const request = signed(source, newId(name));
      await expectHandledOnce(source, request);
      const again = await app().fetch(request.path, request.init);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ok: true, duplicate: true });
      expect(again.headers.get("x-postel-duplicate")).toBe("true");
      expect(await seen(request.id)).toHaveLength(1);
    }
  });
}

function messageOf(error: unknown): string {
  if (error && typeof error === "object" && "errors" in error && Array.isArray(error.errors)) {
    // esbuild's BuildFailure: each error with where it happened.
    const errors = error.errors as { text: string; location?: { file: string; line: number } | null }[];
    return errors
      .map((e) => (e.location ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text))
      .join("; ");
  }
  return error instanceof Error ? error.message : String(error);
}
