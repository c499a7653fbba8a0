import { afterEach } from "vitest";
import { ManualClock } from "../../src/clock.js";
import type { OutboundOptions } from "../../src/config/options.js";
import { Postel, type PostelInstance } from "../../src/postel.js";
import { seededRandom } from "../../src/random.js";
import { InMemoryStorage } from "../../src/storage/in-memory-storage.js";
import type { Storage } from "../../src/storage/storage.js";
import { type Receiver, startReceiver } from "./receiver.js";

/** A Postel on InMemoryStorage, a manual clock, no jitter surprises, and a live receiver. */
export interface Harness {
  postel: PostelInstance<Storage<unknown>>;
  clock: ManualClock;
  storage: ReturnType<typeof InMemoryStorage>;
  receiver: Receiver;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

/** Builds a harness; torn down after each test. */
export async function harness(outbound: Partial<OutboundOptions> = {}): Promise<Harness> {
  const clock = new ManualClock();
  const storage = InMemoryStorage();
  const receiver = await startReceiver();
  const postel = Postel({
    clock,
    random: seededRandom(7),
    outbound: {
      storage,
      ...outbound,
      http: { allowPrivateNetworks: true, timeout: "2s", ...outbound.http },
    } as OutboundOptions,
  });
  open.push(async () => {
    await postel.close();
    await receiver.close();
  });
  return { postel, clock, storage, receiver };
}
