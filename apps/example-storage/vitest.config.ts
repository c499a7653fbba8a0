import { postelVitestConfig } from "../../vitest.shared.ts";

export default postelVitestConfig();
