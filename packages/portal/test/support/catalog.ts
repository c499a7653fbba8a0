import { defineEvents } from "@postel/core";

/** A schema any data passes: the portal's tests are about tenants, not payloads. */
export const anything = {
  "~standard": { version: 1, vendor: "test", validate: (value: unknown) => ({ value }) },
} as const;

/**
 * The catalog of the pages' and the browser's tests: two grouped types (one description holding
 * markup, which must render as text) and an ungrouped, deprecated one.
 */
export const catalog = defineEvents({
  "order.created": {
    schema: anything,
    description: "An order was placed.",
    examples: [{ n: 1 }],
    group: "orders",
  },
  "order.paid": {
    schema: anything,
    description: "An order was paid <b>in full</b>.",
    examples: [{}],
    group: "orders",
  },
  "invoice.sent": {
    schema: anything,
    description: "An invoice went out.",
    examples: [{}],
    deprecated: "use invoice.issued",
  },
});
