import { defineEvents, isPostelError } from "@postel/core";
import { describe, expect, test } from "vitest";
import { RECOVER_LIMIT, tenantScope } from "../src/scope.js";
import { anything } from "./support/catalog.js";
import { outboxWithReceiver } from "./support/outbox.js";

const event = { schema: anything, description: "A test event.", examples: [{}] as [unknown] };
const { postel, origin } = outboxWithReceiver(
  defineEvents({ "order.created": event, "order.paid": event, "invoice.sent": event }),
);
const acme = tenantScope(postel.outbound, { tenantId: "acme", actor: "ada@acme" }, { maxEndpoints: 3 });
const globex = tenantScope(
  postel.outbound,
  { tenantId: "globex", actor: "hank@globex" },
  { maxEndpoints: 3 },
);

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return isPostelError(error) ? error.code : `not a PostelError: ${String(error)}`;
  }
  return undefined;
}

describe("a tenant's scope", () => {
  test("another tenant's endpoint, message and delivery are not found by any verb, and nothing changes", async () => {
    const theirs = await globex.createEndpoint({ url: `${origin()}/fail`, types: ["order.*"] });
    const { id: messageId } = await postel.outbound.send({
      type: "order.created",
      data: { n: 1 },
      tenantId: "globex",
    });
    const tenantless = await postel.outbound.send({ type: "order.created", data: { n: 2 } });
    await postel.drain();
    const [delivery] = await globex.deliveries(messageId);
    expect(delivery?.delivery.status).toBe("dead-lettered");
    const before = JSON.stringify([
      await postel.outbound.endpoints.get(theirs.id),
      await postel.outbound.messages.deliveries(messageId),
    ]);

    const endpointVerbs = [
      () => acme.endpoint(theirs.id),
      () => acme.updateEndpoint(theirs.id, { url: `${origin()}/stolen` }),
      () => acme.disableEndpoint(theirs.id),
      () => acme.enableEndpoint(theirs.id),
      () => acme.deleteEndpoint(theirs.id),
      () => acme.revealSecret(theirs.id),
      () => acme.rotateSecret(theirs.id, "1h"),
      () => acme.sendTest(theirs.id, "order.created"),
      () => acme.recoverCount(theirs.id, 0),
      () => acme.recover(theirs.id, 0),
    ];
    for (const verb of endpointVerbs) expect(await codeOf(verb())).toBe("ENDPOINT_NOT_FOUND");
    for (const id of [messageId, tenantless.id, "msg_unknown", "../../x", ""]) {
      expect(await codeOf(acme.message(id)), id).toBe("MESSAGE_NOT_FOUND");
      expect(await codeOf(acme.deliveries(id)), id).toBe("MESSAGE_NOT_FOUND");
      expect(await codeOf(acme.replayDelivery(id, delivery!.delivery.id)), id).toBe("MESSAGE_NOT_FOUND");
    }
    expect(await codeOf(acme.endpoint("ep_unknown"))).toBe("ENDPOINT_NOT_FOUND");
    expect((await acme.listEndpoints()).items).toEqual([]);
    expect((await acme.listMessages()).items.map((m) => m.id)).not.toContain(tenantless.id);
    expect((await acme.listMessages()).items).toEqual([]);

    const after = JSON.stringify([
      await postel.outbound.endpoints.get(theirs.id),
      await postel.outbound.messages.deliveries(messageId),
    ]);
    expect(after).toBe(before);
  });

  test("a tenant's own endpoint: created under its tenant whatever the input says, limited, typed from the catalog", async () => {
    const created = await acme.createEndpoint({
      url: `${origin()}/ok`,
      types: ["order.paid"],
      ...({ tenantId: "globex", headers: { authorization: "x" } } as object),
    });
    const stored = await postel.outbound.endpoints.get(created.id);
    expect(stored?.tenantId).toBe("acme");
    expect(stored?.headers).toEqual({});
    expect(Object.keys(created)).not.toContain("tenantId");
    expect(await codeOf(acme.createEndpoint({ url: `${origin()}/ok`, types: ["refund.*"] }))).toBe(
      "INVALID_ENDPOINT",
    );
    await acme.createEndpoint({ url: `${origin()}/ok` });
    await acme.createEndpoint({ url: `${origin()}/ok` });
    expect(await codeOf(acme.createEndpoint({ url: `${origin()}/ok` }))).toBe("PORTAL_LIMIT_REACHED");
    expect((await acme.listEndpoints()).items).toHaveLength(3);
    await acme.deleteEndpoint(created.id);
    expect(await codeOf(acme.endpoint(created.id))).toBe("ENDPOINT_NOT_FOUND");
  });

  test("replay one delivery, and recover counts before it sends again only the failures since a time", async () => {
    const endpoint = await globex.createEndpoint({ url: `${origin()}/fail`, types: ["invoice.sent"] });
    const since = Date.now() - 1;
    const sent = [];
    for (let n = 0; n < 3; n++)
      sent.push(await postel.outbound.send({ type: "invoice.sent", data: { n }, tenantId: "globex" }));
    await postel.drain();
    expect(await globex.recoverCount(endpoint.id, since)).toBe(3);
    expect(await globex.recoverCount(endpoint.id, Date.now() + 60_000)).toBe(0);
    const [first] = await globex.deliveries(sent[0]!.id);
    expect(await globex.replayDelivery(sent[0]!.id, first!.delivery.id)).toBe(1);
    expect(await globex.recoverCount(endpoint.id, since)).toBe(2);
    expect(await globex.recover(endpoint.id, since)).toBe(2);
    expect(await globex.recoverCount(endpoint.id, since)).toBe(0);
    await postel.drain();
    expect(await globex.recoverCount(endpoint.id, since)).toBe(3);
    expect(RECOVER_LIMIT).toBeGreaterThan(0);
  });
});
