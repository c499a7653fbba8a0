import type { Server } from "node:http";
import { describe, expect, onTestFinished, test, vi } from "vitest";
import type { VerifiedEvent } from "@postel/signing/inbound";
import { abortMidBody, postRaw } from "./raw-http.js";

/** A freshly mounted adapter, reached over a socket, and the signed headers of `body` as `msg_1`. */
export interface RawHttpTarget {
  url: string;
  server: Server;
  calls: VerifiedEvent[];
  headers: Record<string, string>;
}

/** What the raw-HTTP group needs from the adapter conformance suite. */
export interface RawHttpTestOptions {
  body: string;
  start(): Promise<RawHttpTarget>;
  /** The runtime hands the adapter only fetch `Headers`: repeated copies arrive joined with ", ". */
  fetchHeadersOnly: boolean;
  /** Why the group is skipped, when it is. */
  skip: string | undefined;
}

/**
 * Registers the requests fetch cannot send: a header line sent twice, as a proxy may, and a body the
 * client abandons half-way.
 */
export function rawHttpTests({ body, start, fetchHeadersOnly, skip }: RawHttpTestOptions): void {
  const it = (title: string, fn: () => Promise<void>) =>
    skip === undefined ? test(title, fn) : test.skip(`${title} (skipped: ${skip})`, fn);

  describe("over raw HTTP", () => {
    if (fetchHeadersOnly) {
      // The documented limitation: the copies cannot be told apart, so the joined id fails to verify.
      it("with fetch Headers only, refuses a repeated webhook-id, identical or not (the copies arrive joined), never accepts it", async () => {
        const { url, calls, headers } = await start();
        for (const ids of [
          ["msg_1", "msg_1"],
          ["msg_1", "msg_2"],
        ]) {
          const response = await postRaw(url, { ...headers, "webhook-id": ids }, body);
          expect(response).toEqual({ status: 401, code: "SIGNATURE_INVALID" });
        }
        expect(calls).toHaveLength(0);
      });
    } else {
      it("accepts a webhook-id sent twice with the same value", async () => {
        const { url, calls, headers } = await start();
        const response = await postRaw(url, { ...headers, "webhook-id": ["msg_1", "msg_1"] }, body);
        expect(response).toEqual({ status: 200, code: undefined });
        expect(calls.map((event) => event.id)).toEqual(["msg_1"]);
      });

      it("refuses a webhook-id sent twice with different values as 400 MALFORMED_HEADER", async () => {
        const { url, calls, headers } = await start();
        const response = await postRaw(url, { ...headers, "webhook-id": ["msg_1", "msg_2"] }, body);
        expect(response).toEqual({ status: 400, code: "MALFORMED_HEADER" });
        expect(calls).toHaveLength(0);
      });
    }

    it("verifies a signature that arrives in the second of two webhook-signature headers", async () => {
      const { url, headers } = await start();
      const stale = `v1,${Buffer.alloc(32).toString("base64")}`;
      const response = await postRaw(
        url,
        { ...headers, "webhook-signature": [stale, headers["webhook-signature"]!] },
        body,
      );
      expect(response.status).toBe(200);
    });

    it("drops a client that aborts mid-body without writing to the logs, and keeps serving", async () => {
      const { url, server, calls, headers } = await start();
      const errors = vi.spyOn(console, "error");
      const stderr = vi.spyOn(process.stderr, "write");
      onTestFinished(() => {
        errors.mockRestore();
        stderr.mockRestore();
      });
      await abortMidBody(server, url, headers, body);
      expect((await postRaw(url, headers, body)).status).toBe(200);
      expect(errors).not.toHaveBeenCalled();
      expect(stderr).not.toHaveBeenCalled();
      expect(calls).toHaveLength(1);
    });
  });
}
