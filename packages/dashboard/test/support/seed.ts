import {
  type Endpoint,
  LinearBackoff,
  ManualClock,
  Postel,
  type PostelInstance,
  type Storage,
} from "@postel/core";
import { HOSTILE } from "./hostile.js";
import type { TestReceiver } from "./receiver.js";

/** A Postel on `storage` with a manual clock, its endpoints, and messages delivered or dead-lettered through real HTTP. */
export interface Seeded {
  postel: PostelInstance<Storage<unknown>>;
  clock: ManualClock;
  good: Endpoint;
  broken: Endpoint;
  /** Messages delivered to `good` and dead-lettered at `broken`. */
  ids: string[];
  /** Sent last, to `good` only: its tenant, type and payload are hostile. */
  hostileId: string;
}

export async function seed(storage: Storage<unknown>, receiver: TestReceiver): Promise<Seeded> {
  const clock = new ManualClock();
  const postel = Postel({
    outbound: { storage, http: { allowPrivateNetworks: true }, workers: { pollInterval: "1h" } },
    clock,
  });
  const good = await postel.outbound.endpoints.create({
    url: receiver.url("/ok"),
    description: HOSTILE.description,
    metadata: HOSTILE.metadata,
    headers: { authorization: "Bearer receiver-credential" },
    maxInFlight: 8,
  });
  const broken = await postel.outbound.endpoints.create({
    url: receiver.url("/broken"),
    description: "Billing receiver (broken)",
    types: ["order.*"],
    retryPolicy: LinearBackoff({ maxAttempts: 1, step: "1s", jitter: 0 }),
    circuitBreaker: { minimumVolume: 1000 },
  });
  const ids: string[] = [];
  for (let i = 1; i <= 3; i++) {
    ids.push(
      (await postel.outbound.send({ type: "order.created", data: { order: i, ...HOSTILE.payload } })).id,
    );
    clock.advance("1s");
  }
  const hostileId = (
    await postel.outbound.send({ type: "invoice.paid", data: HOSTILE.payload, tenantId: HOSTILE.tenant })
  ).id;
  await deliverAll(postel, clock);
  return { postel, clock, good, broken, ids, hostileId };
}

/** Drains until nothing is due, moving the clock past each retry delay. */
export async function deliverAll(
  postel: PostelInstance<Storage<unknown>>,
  clock: ManualClock,
): Promise<void> {
  for (let round = 0; round < 5; round++) {
    await postel.drain();
    clock.advance("2s");
  }
}
