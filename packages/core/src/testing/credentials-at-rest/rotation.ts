import { randomBytes } from "node:crypto";
import { generateSecret } from "@postel/signing";
import { expect } from "vitest";
import type { PostelEventMap } from "../../engine/events.js";
import type { CredentialStore } from "../../storage/credentials-store.js";
import { type AtRestContext, group, newKey } from "./context.js";
import { countDeliveries } from "../conformance/fixtures.js";

const ENDPOINTS = 50;
// Two endpoints per type: every message is fanned out to two.
const TYPES = 25;
const MIN_MESSAGES = 1_500;
const BATCH = 25;
// The sender stays at most this many deliveries ahead of the receiver, so the drain runs throughout.
const AHEAD = 400;

/** Proof of issue 28: a key rotation under a running drain loses nothing and repeats only what an unanswered attempt explains. */
export function rotationTests(context: AtRestContext): void {
  group(
    context,
    "rotation",
    (test) => {
      test("reencrypt from k1 to [k2, k1] while workers drain and users rotate secrets and edit headers: every webhook arrives (again only after an attempt that got no answer), every signature valid, every value under k2", async () => {
        const storage = context.storage();
        const receiver = await context.receiver();
        const k1 = newKey("k1");
        const k2 = newKey("k2");
        const before = context.postel({ keys: [k1] });
        const paths = new Map<string, string>();
        for (let i = 0; i < ENDPOINTS; i++) {
          const path = `/rotation/${i}`;
          const secret = generateSecret();
          receiver.trust(path, secret);
          const { id } = await before.outbound.endpoints.create({
            url: receiver.url(path),
            types: [`rotation.${i % TYPES}`],
            secret,
            headers: { Authorization: `Bearer ${randomBytes(24).toString("base64url")}` },
          });
          paths.set(id, path);
        }

        // Every instance has both keys; k2 now encrypts.
        const postel = context.postel({ keys: [k2, k1] });
        const errors: PostelEventMap["error"][] = [];
        postel.on("error", (error) => errors.push(error));
        let delivered = 0;
        let allDelivered: (() => void) | null = null;
        let expected = Number.POSITIVE_INFINITY;
        postel.on("delivered", () => {
          if (++delivered >= expected) allDelivered?.();
        });
        await postel.start();

        // Each rewrite waits for a webhook to arrive after the one before it, so rewrites and
        // deliveries interleave; some rewrites find the endpoint changed by a user right before
        // their compare-and-set (a secret rotated, headers edited): those must lose and be retried.
        const store = storage.credentials as CredentialStore;
        const rewrite = store.rewriteCredentials.bind(store);
        const rotated = new Map<string, string>();
        const edited = new Map<string, string>();
        let calls = 0;
        let arrived = 0;
        store.rewriteCredentials = async (id, current, next) => {
          calls++;
          await receiver.reach(arrived + 1);
          arrived = receiver.count();
          if (calls % 10 === 5 && rotated.size < 5) {
            const secret = await postel.outbound.endpoints.rotateSecret(id);
            receiver.trust(paths.get(id)!, secret);
            rotated.set(id, secret);
          } else if (calls % 10 === 8 && edited.size < 5) {
            const authorization = `Bearer edited-${randomBytes(12).toString("hex")}`;
            await postel.outbound.endpoints.update(id, { headers: { Authorization: authorization } });
            edited.set(id, authorization);
          }
          return rewrite(id, current, next);
        };

        let reencrypting = true;
        let sent = 0;
        const sending = (async () => {
          while (reencrypting || sent < MIN_MESSAGES) {
            await receiver.reach(Math.max(0, 2 * sent - AHEAD), 120_000);
            const events = Array.from({ length: BATCH }, (_, j) => ({
              type: `rotation.${(sent + j) % TYPES}`,
              data: { n: sent + j },
            }));
            await postel.outbound.sendBatch(events);
            sent += BATCH;
          }
        })();
        const result = await postel.outbound.credentials.reencrypt({ batchSize: 2 });
        reencrypting = false;
        await sending;
        expected = 2 * sent;
        if (delivered < expected) await new Promise<void>((resolve) => (allDelivered = resolve));
        await postel.stop();

        expect(receiver.invalid).toEqual([]);
        expect(receiver.received.size).toBe(2 * sent);
        // At least once, and more only where the trail says why: a webhook that arrived n times was
        // attempted at least n times, the last attempt succeeded and every earlier one got no answer
        // (a timeout or a cut connection on a loaded machine, after the request had left). A repeat
        // with no such attempt would be a defect: a delivery sent twice.
        const endpointOf = new Map([...paths].map(([id, path]) => [path, id]));
        for (const [key, times] of receiver.received) {
          if (times === 1) continue;
          const [path, webhookId] = key.split(" ") as [string, string];
          const trail = (await postel.outbound.messages.attempts(webhookId)).filter(
            (a) => a.endpointId === endpointOf.get(path),
          );
          const unanswered = trail.slice(0, -1).filter((a) => a.statusCode === null);
          expect({ key, times, trail: trail.length, last: trail.at(-1)?.outcome }).toEqual({
            key,
            times,
            trail: Math.max(times, trail.length),
            last: "success",
          });
          expect(unanswered.length, `${key}: ${JSON.stringify(trail)}`).toBeGreaterThanOrEqual(times - 1);
        }
        expect(await countDeliveries(storage)).toEqual({ succeeded: 2 * sent });
        expect(errors).toEqual([]);
        expect(rotated.size).toBe(5);
        expect(edited.size).toBe(5);
        expect(result).toMatchObject({ examined: ENDPOINTS, rewritten: ENDPOINTS, left: [] });
        // Each user change made its rewrite lose once (then it was read again and retried).
        expect(result.skipped).toBe(rotated.size + edited.size);

        // Every stored value is under k2: an instance with k2 alone reads everything, users' changes kept.
        const stored = await storage.operations!.listEndpoints({ limit: 1_000 });
        const values = stored.flatMap((e) => [
          ...Object.values(e.headers),
          ...e.secrets.map((s) => s.secret),
        ]);
        expect(values.length).toBe(2 * ENDPOINTS + rotated.size);
        expect(values.filter((value) => !value.startsWith("pcv1.k2."))).toEqual([]);
        const after = context.postel({ keys: [k2] });
        for (const [id, secret] of rotated) expect(await after.outbound.endpoints.secret(id)).toBe(secret);
        for (const [id, authorization] of edited) {
          expect((await after.outbound.endpoints.get(id))?.headers).toEqual({ Authorization: authorization });
        }
        expect((await after.outbound.endpoints.list({ limit: 1_000 })).items).toHaveLength(ENDPOINTS);
      }, 240_000);
    },
    undefined,
  );
}
