import { receivingSuite } from "./receiving-suite.js";
import { edgeRuntime } from "./runtimes.js";

receivingSuite(edgeRuntime);
