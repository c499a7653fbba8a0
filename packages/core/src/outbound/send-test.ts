import { InvalidInputError } from "../errors.js";
import type { EndpointRecord } from "../storage/records.js";
import { assertDeclared, checkAgainstCatalog } from "./catalog.js";
import { type SendDeps, toNewMessage } from "./send.js";
import type { SendResult } from "./types.js";

/** What `endpoints.sendTest()` sends: a type and, without a catalog example to fall back on, its data. */
export interface TestEventInput {
  /** The event type (with a catalog, a declared one). */
  type: string;
  /** The event's data. Default: the catalog's first example of `type`. */
  data?: unknown;
}

/**
 * Sends one test event to `endpoint` only (found by `endpoints.sendTest`), through the normal pipeline (signed, retried,
 * recorded): the endpoint receives it whatever its `types` and filters, no other endpoint does, and
 * the message carries `testEndpointId` in the trail. With a catalog, `type` must be declared and
 * `data` (default: its first example) must pass its schema.
 */
export async function sendTest(
  deps: SendDeps,
  endpoint: EndpointRecord,
  input: TestEventInput,
): Promise<SendResult> {
  if (typeof input !== "object" || input === null) {
    throw new InvalidInputError("INVALID_ARGUMENT", "sendTest() takes { type, data? }.");
  }
  const unknown = Object.keys(input).filter((key) => key !== "type" && key !== "data");
  if (unknown.length > 0) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      `sendTest() got unknown field(s) ${unknown.map((key) => JSON.stringify(key)).join(", ")}; it takes { type, data? }.`,
    );
  }
  const catalog = deps.config.events;
  let data = input.data;
  if (data === undefined) {
    if (!catalog) {
      throw new InvalidInputError(
        "INVALID_ARGUMENT",
        "sendTest() needs data: without an event catalog there is no example to send.",
      );
    }
    assertDeclared(catalog, input.type);
    data = catalog.definitions[input.type]!.examples[0];
  }
  // The endpoint's tenant, so the trail files the test where its real events go.
  const event = {
    type: input.type,
    data,
    ...(endpoint.tenantId !== null ? { tenantId: endpoint.tenantId } : {}),
  };
  const checked = catalog ? await checkAgainstCatalog(catalog, event) : event;
  const { message } = toNewMessage(deps, checked, deps.clock.now());
  message.testEndpointId = endpoint.id;
  const result = await deps.config.storage.enqueue(message);
  deps.wake();
  return result;
}
