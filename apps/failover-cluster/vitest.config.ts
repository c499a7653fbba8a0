import { postelVitestConfig } from "../../vitest.shared.ts";

// Building the cluster takes 15-40 s (more on a loaded machine), each failover a few seconds more.
export default postelVitestConfig({ testTimeout: 120_000 });
