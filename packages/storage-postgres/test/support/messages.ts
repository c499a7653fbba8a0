import { randomUUID } from "node:crypto";
import type { NewMessage } from "@postel/core";

/** A message as `send()` would write it, with a fresh id. */
export function newMessage(fields: Partial<NewMessage> = {}): NewMessage {
  return {
    id: `msg_${randomUUID()}`,
    type: "order.created",
    payload: JSON.stringify({ orderId: 42 }),
    tenantId: null,
    idempotencyKey: null,
    createdAt: Date.UTC(2026, 0, 1),
    expiresAt: null,
    ...fields,
  };
}

/** Polls `condition` every 10 ms until it holds, failing after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
