import { receivingSuite } from "./receiving-suite.js";
import { bun } from "./runtimes.js";

receivingSuite(bun);
