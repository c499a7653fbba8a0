import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { EdgeRuntime } from "edge-runtime";
import { Miniflare } from "miniflare";
import type { Bundle, Target } from "./bundle.js";

/** An answer, read on the Node side whatever the runtime's `Response` class. */
export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A fixture running in a real runtime, reached by path. */
export interface Running {
  fetch(
    path: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<Answer>;
  close(): Promise<void>;
}

/** A runtime: how to bundle for it and how to start a bundle in it. */
export interface Runtime {
  target: Target;
  start(bundle: Bundle): Promise<Running>;
}

const BIN = new URL("../node_modules/.bin/", import.meta.url).pathname;
/** A date this workerd (Miniflare 4.20260426) supports; the code must run without `nodejs_compat`. */
const COMPATIBILITY_DATE = "2026-04-01";

async function answer(response: { status: number; headers: Headers; text(): Promise<string> }) {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text is the body.
  }
  return { status: response.status, headers: response.headers, body };
}

/** workerd through Miniflare, with a local D1 database bound as `DB`, and no `nodejs_compat`. */
export const workerd: Runtime & { miniflare(bundle: Bundle): Miniflare } = {
  target: { name: "workerd", conditions: ["workerd", "worker", "browser"], format: "esm" },
  miniflare: (bundle) =>
    new Miniflare({
      modules: true,
      script: bundle.code,
      scriptPath: bundle.file,
      modulesRoot: dirname(bundle.file),
      compatibilityDate: COMPATIBILITY_DATE,
      d1Databases: ["DB"],
    }),
  async start(bundle) {
    const mf = workerd.miniflare(bundle);
    try {
      await mf.ready;
    } catch (error) {
      await mf.dispose().catch(() => undefined);
      throw error;
    }
    return {
      fetch: async (path, init) => answer(await mf.dispatchFetch(`http://worker.test${path}`, init)),
      close: () => mf.dispose(),
    };
  },
};

/** Vercel's Edge runtime (`edge-runtime`): the bundle is a script that listens for fetch events. */
export const edgeRuntime: Runtime = {
  target: {
    name: "edge-runtime",
    conditions: ["edge-light", "worker", "browser"],
    format: "iife",
    wrapper: 'addEventListener("fetch", (event) => event.respondWith(worker.fetch(event.request)));',
  },
  async start(bundle) {
    const runtime = new EdgeRuntime({ initialCode: bundle.code });
    return {
      fetch: async (path, init) => answer(await runtime.dispatchFetch(`http://edge.test${path}`, init)),
      close: async () => undefined,
    };
  },
};

/** Deno, as a process serving the bundle on a port of its own on 127.0.0.1, with no permission but that. */
export const deno: Runtime = {
  target: {
    name: "deno",
    conditions: ["deno", "worker", "browser"],
    format: "esm",
    wrapper: `Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log(JSON.stringify({ listening: port })) }, (request) => worker.fetch(request));`,
  },
  start: (bundle) =>
    serveProcess("deno", bundle, [
      "run",
      "--quiet",
      "--no-config",
      "--no-lock",
      "--no-npm",
      "--allow-net=127.0.0.1",
      bundle.file,
    ]),
};

/** Bun, as a process serving the bundle with `Bun.serve` on a port of its own on 127.0.0.1. */
export const bun: Runtime = {
  target: {
    name: "bun",
    conditions: ["bun", "worker", "browser"],
    format: "esm",
    wrapper: `const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => worker.fetch(request) });\nconsole.log(JSON.stringify({ listening: server.port }));`,
  },
  start: (bundle) => serveProcess("bun", bundle, ["run", "--no-install", bundle.file]),
};

/**
 * Starts `bin` (from this app's node_modules) and waits for the `{"listening":port}` line the
 * wrapper prints; fails with the process's own output if it exits or stays silent for 30 s.
 */
async function serveProcess(bin: "deno" | "bun", bundle: Bundle, args: string[]): Promise<Running> {
  const home = mkdtempSync(join(tmpdir(), `postel-${bin}-home-`));
  const child = spawn(join(BIN, bin), args, {
    cwd: dirname(bundle.file),
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: home,
      DENO_DIR: join(home, "deno"),
      DENO_NO_UPDATE_CHECK: "1",
      BUN_INSTALL_CACHE_DIR: join(home, "bun"),
      NO_COLOR: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const port = await listeningPort(bin, child);
    return {
      fetch: async (path, init) => answer(await fetch(`http://127.0.0.1:${port}${path}`, init)),
      close: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function listeningPort(bin: string, child: ChildProcess): Promise<number> {
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${bin} did not start serving within 30 s. Its output:\n${output}`)),
      30_000,
    );
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${bin} could not be started (${error.message}); is it installed?`));
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${bin} exited (${signal ?? `code ${code}`}) before serving. Its output:\n${output}`));
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /\{"listening":(\d+)\}/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
}
