import { describe, expect, test } from "vitest";
import { ExponentialBackoff } from "../src/backoff.js";
import { InvalidInputError } from "../src/errors.js";
import { harness } from "./support/harness.js";

/**
 * An id shaped like `id` (same moment, another last character) that is none of `taken`: ids made in
 * the same millisecond differ only at their end, so a fixed flip of the last character can name a
 * sibling delivery of the same fan-out.
 */
function unknownIdLike(id: string, taken: readonly string[]): string {
  for (const last of "0123456789abcdefghjkmnpqrstvwxyz") {
    const candidate = `${id.slice(0, -1)}${last}`;
    if (!taken.includes(candidate)) return candidate;
  }
  throw new Error(`unknownIdLike: every variant of ${id} is taken`);
}

async function deadLettered() {
  const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
  h.receiver.script("/hook", 500);
  const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
  const { id } = await h.postel.outbound.send({ type: "order.created", data: { n: 1 } });
  await h.postel.drain();
  expect((await h.postel.outbound.messages.get(id))?.status).toBe("dead-lettered");
  h.receiver.script("/hook", 200);
  return { ...h, endpoint, id };
}

describe("replay", () => {
  test("by message id re-enqueues with the same webhook-id and the message goes back to pending", async () => {
    const h = await deadLettered();
    const replayed = await h.postel.outbound.replay({ messageId: h.id });
    expect(replayed).toEqual([
      expect.objectContaining({ messageId: h.id, endpointId: h.endpoint.id, webhookId: h.id }),
    ]);
    expect((await h.postel.outbound.messages.get(h.id))?.status).toBe("pending");
    await h.postel.drain();
    expect((await h.postel.outbound.messages.get(h.id))?.status).toBe("dispatched");
    const [first, second] = h.receiver.on("/hook");
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    const attempts = await h.postel.outbound.messages.attempts(h.id);
    expect(attempts.map((a) => a.outcome)).toEqual(["retryable", "success"]);
  });

  test("freshWebhookId gives the receiver a new webhook-id", async () => {
    const h = await deadLettered();
    const [replayed] = await h.postel.outbound.replay({ messageId: h.id }, { freshWebhookId: true });
    expect(replayed?.webhookId).not.toBe(h.id);
    await h.postel.drain();
    expect(h.receiver.on("/hook")[1]?.headers["webhook-id"]).toBe(replayed?.webhookId);
  });

  test("by predicate, in the seed's own form", async () => {
    const h = await deadLettered();
    const ok = await h.postel.outbound.send({ type: "order.created", data: { n: 2 } });
    await h.postel.drain();
    const replayed = await h.postel.outbound.replay({
      filter: (msg) => (msg as { status: string }).status === "dead-lettered",
      freshWebhookId: false,
    });
    expect(replayed.map((r) => r.messageId)).toEqual([h.id]);
    expect((await h.postel.outbound.messages.get(ok.id))?.status).toBe("dispatched");
  });

  test("by endpoint and time range, only inside the range", async () => {
    const h = await deadLettered();
    const start = h.clock.now();
    h.clock.advance("1h");
    h.receiver.script("/hook", 500);
    const later = await h.postel.outbound.send({ type: "order.created", data: { n: 2 } });
    await h.postel.drain();
    const replayed = await h.postel.outbound.replay({
      endpointId: h.endpoint.id,
      since: start,
      until: start + 1,
    });
    expect(replayed.map((r) => r.messageId)).toEqual([h.id]);
    expect((await h.postel.outbound.messages.get(later.id))?.status).toBe("dead-lettered");
  });

  test("a status filter finds the dead letter behind more successes than the limit, and dryRun only counts", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const since = h.clock.now();
    h.receiver.script("/hook", 200);
    for (let n = 0; n < 5; n++) await h.postel.outbound.send({ type: "order.created", data: { n } });
    await h.postel.drain();
    h.receiver.script("/hook", 500);
    const { id } = await h.postel.outbound.send({ type: "order.created", data: { n: 5 } });
    await h.postel.drain();
    const selection = { endpointId: endpoint.id, since };
    const dry = await h.postel.outbound.replay(selection, {
      status: ["dead-lettered"],
      limit: 2,
      dryRun: true,
    });
    expect(dry.map((r) => r.messageId)).toEqual([id]);
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("dead-lettered");
    const replayed = await h.postel.outbound.replay(selection, { status: ["dead-lettered"], limit: 2 });
    expect(replayed.map((r) => r.messageId)).toEqual([id]);
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("pending");
  });

  test("by message id and endpoint, only that delivery: one dead letter, not the message's others", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.receiver.script("/a", 500);
    h.receiver.script("/b", 500);
    const a = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/a") });
    const b = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/b") });
    const { id } = await h.postel.outbound.send({ type: "order.created", data: {} });
    await h.postel.drain();
    const replayed = await h.postel.outbound.replay({ messageId: id, endpointId: a.id });
    expect(replayed.map((r) => r.endpointId)).toEqual([a.id]);
    const deliveries = await h.postel.outbound.messages.deliveries(id);
    expect(deliveries.find((d) => d.endpointId === a.id)?.status).toBe("pending");
    expect(deliveries.find((d) => d.endpointId === b.id)?.status).toBe("dead-lettered");
  });

  test("does not re-enqueue a delivery that is still in flight, and refuses unknown ids", async () => {
    const h = await harness();
    h.receiver.script("/hook", 500);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect(await h.postel.outbound.replay({ messageId: id })).toEqual([]);
    await expect(h.postel.outbound.replay({ messageId: "msg_nope" })).rejects.toMatchObject({
      code: "MESSAGE_NOT_FOUND",
    });
    await expect(h.postel.outbound.replay({} as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

describe("replay by delivery id", () => {
  /** Two endpoints that answer 500 once, no retries: one message, two dead-lettered deliveries. */
  async function twoDeadLetters() {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.receiver.script("/a", 500);
    h.receiver.script("/b", 500);
    const a = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/a"), types: ["order.*"] });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/b"), types: ["order.*"] });
    return { ...h, a };
  }

  test("re-enqueues exactly that delivery, not its message's other one, found among pages of older history", async () => {
    const h = await twoDeadLetters();
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/ok"), types: ["old.*"] });
    h.receiver.script("/ok", 200);
    await h.postel.outbound.sendBatch(
      Array.from({ length: 1200 }, (_, n) => ({ type: "old.item", data: { n } })),
    );
    await h.postel.drain();
    h.clock.advance("1h");
    const { id } = await h.postel.outbound.send({ type: "order.created", data: {} });
    await h.postel.drain();
    const deliveries = await h.postel.outbound.messages.deliveries(id);
    const target = deliveries.find((d) => d.endpointId === h.a.id)!;
    expect(deliveries.map((d) => d.status)).toEqual(["dead-lettered", "dead-lettered"]);

    const dry = await h.postel.outbound.replay({ deliveryIds: [target.id] }, { dryRun: true });
    expect(dry).toEqual([{ messageId: id, deliveryId: target.id, endpointId: h.a.id, webhookId: id }]);
    expect((await h.postel.outbound.messages.deliveries(id)).map((d) => d.status)).toEqual([
      "dead-lettered",
      "dead-lettered",
    ]);

    const replayed = await h.postel.outbound.replay({ deliveryIds: [target.id, target.id] });
    expect(replayed).toEqual([{ messageId: id, deliveryId: target.id, endpointId: h.a.id, webhookId: id }]);
    const after = await h.postel.outbound.messages.deliveries(id);
    expect(after.find((d) => d.id === target.id)?.status).toBe("pending");
    expect(after.find((d) => d.id !== target.id)?.status).toBe("dead-lettered");
    // An id of the same moment that names nothing: the walk goes through the older pages and ends.
    const unknown = unknownIdLike(
      target.id,
      after.map((d) => d.id),
    );
    await expect(h.postel.outbound.replay({ deliveryIds: [unknown] })).rejects.toMatchObject({
      code: "DELIVERY_NOT_FOUND",
    });
  });

  test("validates every id before writing: unknown or malformed ids are DELIVERY_NOT_FOUND", async () => {
    const h = await twoDeadLetters();
    const { id } = await h.postel.outbound.send({ type: "order.created", data: {} });
    await h.postel.drain();
    const deliveries = await h.postel.outbound.messages.deliveries(id);
    const [first] = deliveries;
    // Same time, another random part: shaped like a delivery id of that moment, naming none.
    const unknown = unknownIdLike(
      first!.id,
      deliveries.map((d) => d.id),
    );
    for (const bad of [unknown, "dlv_nope", id, 42]) {
      await expect(
        h.postel.outbound.replay({ deliveryIds: [first!.id, bad as string] }),
      ).rejects.toMatchObject({ code: "DELIVERY_NOT_FOUND" });
    }
    expect((await h.postel.outbound.messages.deliveries(id))[0]?.status).toBe("dead-lettered");
    await expect(h.postel.outbound.replay({ deliveryIds: [] })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  test("a delivery still waiting for a retry is refused as DELIVERY_NOT_FINISHED, naming its state", async () => {
    const h = await harness();
    h.receiver.script("/hook", 500);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    const [delivery] = await h.postel.outbound.messages.deliveries(id);
    expect(delivery?.status).toBe("pending");
    const error = await h.postel.outbound.replay({ deliveryIds: [delivery!.id] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: "DELIVERY_NOT_FINISHED" });
    expect((error as Error).message).toMatch(/is still pending/);
  });
});
