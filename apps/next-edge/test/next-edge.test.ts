import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { createServer } from "node:net";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { sign } from "@postel/signing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GITHUB_SECRET, PRIVATE_KEY, SECRET } from "../lib/keys.js";

const APP = dirname(dirname(fileURLToPath(import.meta.url)));
const NEXT = `${APP}/node_modules/.bin/next`;
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };

/** Runs a command in the app, its output passed through (a build shows its progress), failing on a non-zero exit. */
function run(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(NEXT, args, { cwd: APP, env, stdio: ["ignore", "inherit", "inherit"] });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`next ${args[0]} exited ${code}`)),
    );
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let server: ChildProcess | undefined;
let base = "";

beforeAll(async () => {
  // The app as a user ships it: built, then served by `next start` (edge routes in Next's edge sandbox).
  await run(["build"]);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(NEXT, ["start", "-p", String(port), "-H", "127.0.0.1"], { cwd: APP, env, stdio: "inherit" });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/api/node`)).ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error("next start did not answer within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 600_000);

afterAll(() => {
  server?.kill("SIGTERM");
});

const body = (n: number) => JSON.stringify({ type: "invoice.paid", data: { n, total: 1200 } });

/** A Standard Webhooks request signed with `keys` (a secret: v1; an Ed25519 private key: v1a). */
function standard(id: string, payload: string, keys: string, timestamp = new Date()) {
  return { body: payload, headers: { ...sign({ id, timestamp, body: payload, keys: [keys] }) } };
}

function gitHub(id: string, payload: string) {
  const signature = `sha256=${createHmac("sha256", GITHUB_SECRET).update(payload).digest("hex")}`;
  return {
    body: payload,
    headers: { "x-github-delivery": id, "x-github-event": "push", "x-hub-signature-256": signature },
  };
}

interface Answer {
  status: number;
  error: string | null;
  duplicate: string | null;
  body: string;
}

async function post(
  path: string,
  source: string,
  request: { body: string; headers: Record<string, string> },
) {
  const response = await fetch(`${base}${path}?source=${source}`, {
    method: "POST",
    body: request.body,
    headers: { "content-type": "application/json", ...request.headers },
  });
  const answer: Answer = {
    status: response.status,
    error: response.headers.get("x-postel-error"),
    duplicate: response.headers.get("x-postel-duplicate"),
    body: await response.text(),
  };
  return answer;
}

async function seen(path: string, source: string) {
  const response = await fetch(`${base}${path}?source=${source}`);
  return (await response.json()) as {
    runtime: string;
    seen: { source: string; id: string; payload: unknown }[];
  };
}

const TARGETS = [
  { name: "an App Router route with runtime = 'edge'", path: "/api/edge", runtime: "edge" },
  { name: "middleware", path: "/hooks", runtime: "edge" },
  { name: "the same route on the Node runtime", path: "/api/node", runtime: "nodejs" },
] as const;

describe.each(TARGETS)("next start: $name", ({ path, runtime }) => {
  const tag = path.replaceAll("/", "_");

  test("runs where it says, a signed request → 2xx and the handler ran with the parsed body", async () => {
    const answer = await post(path, "billing", standard(`msg_ok${tag}`, body(1), SECRET));
    expect(answer.status).toBe(200);
    const { runtime: ran, seen: events } = await seen(path, "billing");
    expect(ran).toBe(runtime);
    expect(events).toContainEqual({ source: "billing", id: `msg_ok${tag}`, payload: JSON.parse(body(1)) });
  });

  test("a tampered body → 401 SIGNATURE_INVALID", async () => {
    const request = standard(`msg_tampered${tag}`, body(2), SECRET);
    const answer = await post(path, "billing", { ...request, body: body(3) });
    expect([answer.status, answer.error]).toEqual([401, "SIGNATURE_INVALID"]);
  });

  test("a stale timestamp → its coded error", async () => {
    const stale = new Date(Date.now() - 10 * 60_000);
    const answer = await post(path, "billing", standard(`msg_stale${tag}`, body(4), SECRET, stale));
    expect(answer.status).toBe(401);
    expect(answer.error).toMatch(/^TIMESTAMP_/);
    expect(JSON.parse(answer.body).error.code).toBe(answer.error);
  });

  test("v1a (Ed25519) signed → 2xx", async () => {
    const answer = await post(path, "signed", standard(`msg_v1a${tag}`, body(5), PRIVATE_KEY));
    expect(answer.status).toBe(200);
  });

  test("a provider scheme (GitHub) → 2xx", async () => {
    const answer = await post(path, "github", gitHub(`delivery${tag}`, body(6)));
    expect(answer.status).toBe(200);
  });

  test("a duplicate → deduplicated, the handler ran once", async () => {
    const request = standard(`msg_dup${tag}`, body(7), SECRET);
    const first = await post(path, "billing", request);
    const second = await post(path, "billing", request);
    expect([first.status, first.duplicate]).toEqual([200, null]);
    expect([second.status, second.duplicate]).toEqual([200, "true"]);
    const { seen: events } = await seen(path, "billing");
    expect(events.filter((event) => event.id === `msg_dup${tag}`)).toHaveLength(1);
  });
});

describe("next start: the edge runtime answers like the Node runtime", () => {
  test("same status, error code and body for every kind of request", async () => {
    const cases = (tag: string) =>
      [
        ["billing", standard(`same_ok${tag}`, body(8), SECRET)],
        ["billing", { ...standard(`same_bad${tag}`, body(8), SECRET), body: body(9) }],
        ["billing", standard(`same_stale${tag}`, body(8), SECRET, new Date(Date.now() - 3_600_000))],
        ["billing", { body: body(8), headers: { "webhook-id": `same_none${tag}` } }],
        ["signed", standard(`same_v1a${tag}`, body(8), PRIVATE_KEY)],
        ["github", gitHub(`same_gh${tag}`, body(8))],
      ] as const;
    // Signed once, sent to each: the three gates have their own dedup. A stale timestamp's message
    // names how far in the past it is, which moves on between the three: that count is left out.
    const requests = cases("x");
    const answers = async (path: string) => {
      const out: Answer[] = [];
      for (const [source, request] of requests) {
        const answer = await post(path, source, request);
        out.push({ ...answer, body: answer.body.replace(/\d+ s in the past/, "N s in the past") });
      }
      return out;
    };
    const node = await answers("/api/node");
    expect(await answers("/api/edge")).toEqual(node);
    expect(await answers("/hooks")).toEqual(node);
  });
});
