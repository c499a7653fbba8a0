import { randomBytes } from "node:crypto";
import { generateSecret } from "@postel/signing";
import { expect } from "vitest";
import type { PostelInstance } from "../../postel.js";
import type { Storage } from "../../storage/storage.js";
import { type AtRestContext, group, newKey } from "./context.js";
import { encodingsOf, findIn } from "./find-encoded.js";

interface Created {
  id: string;
  secret: string;
  authorization: string;
}

/** `count` endpoints, each with a random signing secret and `Authorization: Bearer <random>`, through the API. */
async function createEndpoints(postel: PostelInstance<Storage<unknown>>, count: number): Promise<Created[]> {
  const created: Created[] = [];
  for (let i = 0; i < count; i += 20) {
    const chunk = Array.from({ length: Math.min(20, count - i) }, async (_, j) => {
      const secret = generateSecret();
      const authorization = `Bearer ${randomBytes(24).toString("base64url")}`;
      const endpoint = await postel.outbound.endpoints.create({
        url: `http://127.0.0.1:9/hooks/${i + j}`,
        secret,
        headers: { Authorization: authorization, "X-Team": "billing" },
      });
      return { id: endpoint.id, secret, authorization };
    });
    created.push(...(await Promise.all(chunk)));
  }
  return created;
}

/** Proof of issue 28: what lies in the database (a dump, the file) holds no credential in any encoding. */
export function dumpTests(context: AtRestContext): void {
  group(
    context,
    "dump",
    (test) => {
      test("a dump of an outbox with 1,000 endpoints holds none of their secrets or header values, in any encoding", async () => {
        const postel = context.postel({ keys: [newKey("k1")] });
        const created = await createEndpoints(postel, 1_000);
        // What was stored still reads back as given.
        for (const { id, secret, authorization } of [created[0]!, created[999]!]) {
          expect(await postel.outbound.endpoints.secret(id)).toBe(secret);
          expect((await postel.outbound.endpoints.get(id))?.headers["Authorization"]).toBe(authorization);
        }
        const needles = created.flatMap(({ secret, authorization }) => [
          ...encodingsOf(secret),
          ...encodingsOf(authorization),
        ]);
        const dump = await context.dump!();
        expect(dump.byteLength).toBeGreaterThan(1_000 * 100);
        expect(findIn(dump, needles)).toEqual([]);
      }, 240_000);

      test("with encryption off the same dump holds every one of them (the search can fail)", async () => {
        const postel = context.postel({ encryption: "off" });
        const created = await createEndpoints(postel, 50);
        const raw = created.flatMap(({ secret, authorization }) => [secret, authorization]);
        const dump = await context.dump!();
        expect(findIn(dump, raw).sort()).toEqual([...raw].sort());
      }, 60_000);
    },
    context.dump === undefined ? "the storage keeps nothing at rest to dump" : undefined,
  );
}
