import { runGateProperties } from "@postel/core/testing";
import { SqliteDedupStore } from "../src/index.js";
import { tempDatabase } from "./temp-db.js";

const file = tempDatabase();

runGateProperties({
  name: "sqlite",
  dedup: () => SqliteDedupStore({ url: file.url }),
  destroy: async (store) => {
    await store.close();
    file.remove();
  },
});
