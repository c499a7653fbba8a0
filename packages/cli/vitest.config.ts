import { postelVitestConfig } from "../../vitest.shared.ts";

// Every test runs the built binary several times (a Node start each, about a second on a loaded
// 2-core CI machine): one test took 14 s of the default 20 s there.
export default postelVitestConfig({ testTimeout: 60_000 });
