/**
 * `@postel/web-kit/testing`: the hardening suite every Postel surface (dashboard, portal) runs on
 * each of its mounts, over raw sockets, so what one surface's review found is proven of all.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { MountableHandler } from "./mounts/mountable.js";
import { type RawExchange, rawExchange } from "./raw-http.js";
import type { HardeningMount, MountedServer } from "./testing-mounts.js";

export { type RawExchange, rawExchange } from "./raw-http.js";

/** How the suite controls the surface under test. */
export interface HardeningOptions {
  /** The surface, for test titles (`"dashboard"`). */
  surface: string;
  /** The mount path the handlers are created with, e.g. `"/postel"` (letters only, so case variants exist). */
  basePath: string;
  /**
   * Creates the surface at `basePath` whose caller check (`authorize`, `authenticate`) calls
   * `identify`: true lets the request in, false refuses it; whatever it throws must reach `onError`.
   */
  create(
    identify: (request: Request) => Promise<boolean>,
    onError: (error: unknown) => void,
  ): MountableHandler;
  /** A path below `basePath` an identified caller may GET (200), e.g. `"/"`. */
  page: string;
  mounts: HardeningMount[];
}

const STACK = /\n\s+at |Error:|node_modules|\.ts:\d+/;

function expectPlainRefusal(answer: RawExchange, statuses: number[], what: string): void {
  expect(statuses, `${what}: status ${answer.status}, body ${answer.body.slice(0, 200)}`).toContain(
    answer.status,
  );
  expect(answer.body, what).not.toMatch(STACK);
}

function expectSecured(answer: RawExchange, what: string): void {
  expect(answer.headers["content-security-policy"], what).toContain("default-src 'none'");
  expect(answer.headers["x-content-type-options"], what).toBe("nosniff");
  expect(answer.headers["content-type"], what).toContain("text/plain");
}

/**
 * Registers, per mount: a crafted or malformed `Host` cannot change the route or raise a stack; a
 * case variant of the base path answers a plain 404; the body is not read before the caller is
 * identified; an exception in the caller check answers a plain 500 and reaches `onError`; and a
 * battery of hostile anonymous requests each get a plain 4xx with the security headers and no stack.
 */
export function runMountHardening(options: HardeningOptions): void {
  for (const mount of options.mounts) {
    describe(`${options.surface} on ${mount.name}: hostile requests`, () => {
      let verdict: (request: Request) => Promise<boolean> = async () => false;
      const identified: Request[] = [];
      const errors: unknown[] = [];
      let server: MountedServer;
      const base = options.basePath;
      beforeAll(async () => {
        const handler = options.create(
          async (request) => {
            identified.push(request);
            return verdict(request);
          },
          (error) => errors.push(error),
        );
        server = await mount.start(handler);
      });
      afterAll(() => server.close());
      const host = () => `127.0.0.1:${server.port}`;
      const get = (path: string, headers = `Host: ${host()}`) =>
        rawExchange(server.port, `GET ${path} HTTP/1.1\r\n${headers}\r\nConnection: close`);

      test("a crafted Host cannot make it serve another route than the framework routed", async () => {
        verdict = async () => true;
        const normal = await get(`${base}${options.page}`);
        expect(normal.status).toBe(200);
        const crafted = await get(`${base}${options.page}`, `Host: ${host()}${base}/elsewhere?x=`);
        expectPlainRefusal(crafted, [400], "crafted Host");
        verdict = async () => false;
      });

      test("a malformed Host gets a plain 400, never a stack", async () => {
        for (const bad of ["[::1", "exa mple.com", "a:b:c", "ex%41mple.com", "@evil", "host:99999999"]) {
          expectPlainRefusal(await get(`${base}${options.page}`, `Host: ${bad}`), [400], `Host: ${bad}`);
        }
      });

      test("a case variant of the base path gets a plain 404, never a stack", async () => {
        const variant = `${base.toUpperCase()}${options.page}`;
        expectPlainRefusal(await get(variant), [404], variant);
      });

      test("the body is not read before the caller is identified", async () => {
        identified.length = 0;
        const head = `POST ${base}${options.page} HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1048000`;
        // Ten bytes of a megabyte: a handler that read the body first would wait for the rest.
        const answer = await rawExchange(server.port, head, "_csrf=xxxx");
        expect(answer.status).toBe(403);
        expectSecured(answer, "anonymous upload");
        expect(identified).toHaveLength(1);
      });

      test("an exception in the caller check answers a plain 500 and reaches onError", async () => {
        errors.length = 0;
        verdict = async () => {
          throw new Error("session store down at /srv/app/session.ts:12");
        };
        const answer = await get(`${base}${options.page}`);
        verdict = async () => false;
        expectPlainRefusal(answer, [500], "throwing caller check");
        expectSecured(answer, "throwing caller check");
        expect(answer.body).not.toContain("session store");
        expect(String(errors[0])).toContain("session store down");
      });

      test("every anonymous request gets a plain 4xx with the security headers and no stack", async () => {
        verdict = async () => false;
        const h = `Host: ${host()}\r\nConnection: close`;
        const battery: [string, string, string?][] = [
          ["GET page", `GET ${base}${options.page} HTTP/1.1\r\n${h}`],
          ["GET below", `GET ${base}/endpoints/ep_1 HTTP/1.1\r\n${h}`],
          ["HEAD", `HEAD ${base}${options.page} HTTP/1.1\r\n${h}`],
          ["script in query", `GET ${base}/?q=%3Cscript%3Ealert(1)%3C/script%3E HTTP/1.1\r\n${h}`],
          ["bad escape", `GET ${base}/%E0%A4%A/%zz HTTP/1.1\r\n${h}`],
          ["NUL in path", `GET ${base}/%00 HTTP/1.1\r\n${h}`],
          ["long path", `GET ${base}/${"a".repeat(6000)} HTTP/1.1\r\n${h}`],
          ["absolute-form target", `GET http://${host()}${base}${options.page} HTTP/1.1\r\n${h}`],
          ["PUT", `PUT ${base}${options.page} HTTP/1.1\r\n${h}\r\nContent-Length: 2`, "{}"],
          ["DELETE", `DELETE ${base}/endpoints/ep_1 HTTP/1.1\r\n${h}`],
          [
            "PATCH json",
            `PATCH ${base}/api/endpoints/ep_1 HTTP/1.1\r\n${h}\r\nContent-Type: application/json\r\nContent-Length: 2`,
            "{}",
          ],
          [
            "POST form",
            `POST ${base}/endpoints/ep_1/disable HTTP/1.1\r\n${h}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 6`,
            "_csrf=",
          ],
          ["POST oversized", `POST ${base}${options.page} HTTP/1.1\r\n${h}\r\nContent-Length: 5000000`, "x"],
          [
            "POST chunked",
            `POST ${base}${options.page} HTTP/1.1\r\n${h}\r\nTransfer-Encoding: chunked`,
            "5\r\nhello\r\n0\r\n\r\n",
          ],
          ["POST no type", `POST ${base}${options.page} HTTP/1.1\r\n${h}\r\nContent-Length: 3`, "abc"],
          [
            "POST json garbage",
            `POST ${base}/api/endpoints HTTP/1.1\r\n${h}\r\nContent-Type: application/json\r\nContent-Length: 5`,
            "{{{{{",
          ],
          [
            "cookie garbage",
            `GET ${base}${options.page} HTTP/1.1\r\n${h}\r\nCookie: postel_portal_session=../../etc; postel_dashboard_csrf=%00%ff`,
          ],
          [
            "origin evil",
            `POST ${base}${options.page} HTTP/1.1\r\n${h}\r\nOrigin: https://evil.example\r\nContent-Length: 0`,
          ],
        ];
        for (const [what, head, body] of battery) {
          const answer = await rawExchange(server.port, head, body ?? "");
          expectPlainRefusal(answer, [400, 403, 404, 405, 413], what);
          if (answer.status !== 400) expectSecured(answer, what);
        }
      });
    });
  }
}
export {
  type Frameworks,
  frameworkMounts,
  type HardeningMount,
  type MountedServer,
  type SurfaceMounts,
} from "./testing-mounts.js";
