import { receivingSuite } from "./receiving-suite.js";
import { deno } from "./runtimes.js";

receivingSuite(deno);
