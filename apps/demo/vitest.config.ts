import { postelVitestConfig } from "../../vitest.shared.ts";

export default postelVitestConfig({ testTimeout: 130_000 });
