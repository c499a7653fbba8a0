import { postelVitestConfig } from "../../vitest.shared.ts";

export default postelVitestConfig({ testTimeout: 60_000 });
