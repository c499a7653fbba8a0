import { postelVitestConfig } from "../../vitest.shared.ts";

// Browser tests drive a real Chromium against real databases: slower than unit tests.
export default postelVitestConfig({ testTimeout: 60_000 });
