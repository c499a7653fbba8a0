import { describe, expect, test } from "vitest";
import { ExponentialBackoff } from "../src/backoff.js";
import { harness } from "./support/harness.js";

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
