import { sign } from "@postel/signing";
import * as v from "valibot";
import { defineEvents } from "../outbound/catalog.js";

/**
 * The event catalog the adapter conformance suite gives its receiving source (`events`), for adapters'
 * own type tests: `order.created` lower-cases `email`, so its `data` (the schema's output) is not its input.
 */
export const conformanceEvents = defineEvents({
  "order.created": {
    schema: v.object({
      id: v.string(),
      email: v.pipe(
        v.string(),
        v.transform((email) => email.toLowerCase() as Lowercase<string>),
      ),
    }),
    description: "An order was placed.",
    examples: [{ id: "ord_1", email: "Ada@Example.com" }],
  },
  "order.refunded": {
    schema: v.object({ id: v.string(), amount: v.number() }),
    description: "Money went back to the customer.",
    examples: [{ id: "ord_1", amount: 2 }],
  },
});

/**
 * A Standard Webhooks event `{ type, timestamp, data }` sent at `at` (default: now) and signed with
 * `secret`: the bytes and headers to pass `MountedAdapter.post`.
 * @example
 * const response = await adapter.post(...signedEvent(secret, "order.created", { id: "ord_1", email: "A@b.co" }));
 */
export function signedEvent(
  secret: string,
  type: string,
  data: unknown,
  options: { at?: number; id?: string } = {},
): [body: Uint8Array, headers: Record<string, string>] {
  const at = options.at ?? Date.now();
  const body = JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
  const headers = sign({ id: options.id ?? "msg_1", timestamp: new Date(at), body, keys: [secret] });
  return [new TextEncoder().encode(body), { "content-type": "application/json", ...headers }];
}
