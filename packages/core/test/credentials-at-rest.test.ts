import { InMemoryStorage } from "../src/index.js";
import { runCredentialsAtRest } from "../src/testing.js";

// Memory keeps nothing at rest: the dump tests are skipped with that reason.
runCredentialsAtRest({
  name: "memory",
  create: () => InMemoryStorage(),
});
