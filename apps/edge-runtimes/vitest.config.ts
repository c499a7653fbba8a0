import { postelVitestConfig } from "../../vitest.shared.ts";

export default postelVitestConfig({ testTimeout: 30_000 });
