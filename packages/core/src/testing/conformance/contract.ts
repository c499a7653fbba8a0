import { expect } from "vitest";
import { CAPABILITIES, STORAGE_CAPABILITIES, storageShapeIssues } from "../../storage/capabilities.js";
import { type ConformanceContext, group } from "./context.js";

/** The storage's shape: what `Postel()` checks before it uses a storage. */
export function contractTests(context: ConformanceContext): void {
  group(context, "contract", (test) => {
    test("has every verb of the delivery part, and each capability it has is whole", async () => {
      const storage = context.storage();
      expect(storageShapeIssues(storage)).toEqual([]);
    });

    test("keeps each capability's verbs on the capability, not on the storage itself", async () => {
      const storage = context.storage() as unknown as Record<string, unknown>;
      const flat = STORAGE_CAPABILITIES.flatMap((name) =>
        CAPABILITIES[name].verbs
          .filter((verb) => typeof storage[verb] === "function")
          .map((verb) => `${name}.${verb}`),
      );
      expect(flat).toEqual([]);
    });
  });
}
