import { randomBytes } from "node:crypto";
import { generateSecret } from "@postel/signing";
import { expect } from "vitest";
import { type AtRestContext, group, newKey } from "./context.js";

const COUNT = 20;

/** Proof of issue 28: rows written before encryption are read as they are, then encrypted by `reencrypt()`. */
export function migrationTests(context: AtRestContext): void {
  group(context, "migration", (test) => {
    test("plain-text rows written before encryption are read and delivered as is, then reencrypt() encrypts every one", async () => {
      const storage = context.storage();
      const receiver = await context.receiver();
      const plain = context.postel({ encryption: "off" });
      const written = new Map<string, { secret: string; authorization: string }>();
      for (let i = 0; i < COUNT; i++) {
        const secret = generateSecret();
        const authorization = `Bearer ${randomBytes(18).toString("base64url")}`;
        receiver.trust(`/m/${i}`, secret);
        const { id } = await plain.outbound.endpoints.create({
          url: receiver.url(`/m/${i}`),
          types: [`migration.${i}`],
          secret,
          headers: { Authorization: authorization },
        });
        written.set(id, { secret, authorization });
      }
      const raw = async () => storage.operations!.listEndpoints({ limit: 1_000 });
      const valuesOf = (rows: Awaited<ReturnType<typeof raw>>) =>
        rows.flatMap((e) => [...Object.values(e.headers), ...e.secrets.map((s) => s.secret)]);
      expect(valuesOf(await raw()).every((value) => !value.startsWith("pcv1."))).toBe(true);

      const k1 = newKey("k1");
      const postel = context.postel({ keys: [k1] });
      for (const [id, { secret, authorization }] of written) {
        expect(await postel.outbound.endpoints.secret(id)).toBe(secret);
        expect((await postel.outbound.endpoints.get(id))?.headers).toEqual({ Authorization: authorization });
      }
      const sent = await postel.outbound.send({ type: "migration.0", data: {} });
      await postel.drain();
      expect(receiver.received.get(`/m/0 ${sent.id}`)).toBe(1);
      expect(receiver.lastHeaders.get("/m/0")?.["authorization"]).toBe(
        [...written.values()][0]!.authorization,
      );

      const progress: number[] = [];
      const result = await postel.outbound.credentials.reencrypt({
        batchSize: 7,
        onProgress: ({ examined }) => progress.push(examined),
      });
      expect(result).toEqual({ examined: COUNT, rewritten: COUNT, skipped: 0, left: [] });
      expect(progress).toEqual([7, 14, 20]);
      const values = valuesOf(await raw());
      expect(values).toHaveLength(2 * COUNT);
      expect(values.filter((value) => !value.startsWith("pcv1.k1."))).toEqual([]);
      for (const [id, { secret, authorization }] of written) {
        expect(values.some((value) => value.includes(secret) || value.includes(authorization))).toBe(false);
        expect(await postel.outbound.endpoints.secret(id)).toBe(secret);
        expect((await postel.outbound.endpoints.get(id))?.headers).toEqual({ Authorization: authorization });
      }
      // Run again: nothing left to do.
      expect(await postel.outbound.credentials.reencrypt()).toEqual({
        examined: COUNT,
        rewritten: 0,
        skipped: 0,
        left: [],
      });
      const again = await postel.outbound.send({ type: "migration.0", data: {} });
      await postel.drain();
      expect(receiver.received.get(`/m/0 ${again.id}`)).toBe(1);
      expect(receiver.invalid).toEqual([]);
    });
  });
}
