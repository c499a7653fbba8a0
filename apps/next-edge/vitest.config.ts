import { postelVitestConfig } from "../../vitest.shared.ts";

// `next build` takes a minute or more on a busy machine.
export default postelVitestConfig();
