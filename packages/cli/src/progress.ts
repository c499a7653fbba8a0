import type { OptionSpec } from "./args.js";
import type { Output } from "./output.js";

/**
 * Progress on stderr for a long command: redrawn in place on a terminal; otherwise (`--progress` into
 * a log) a line a second and the last one. `report(line, done)` does nothing when not `enabled`.
 */
export function progressLine(out: Output, enabled: boolean): (line: string, done: boolean) => void {
  let last = 0;
  return (line, done) => {
    if (!enabled) return;
    if (out.stderrIsTTY) {
      out.redraw(line, done);
    } else if (done || Date.now() - last >= 1000) {
      last = Date.now();
      out.note(line);
    }
  };
}

/** The `--progress` flag of the commands that report progress. */
export const PROGRESS_OPTION: OptionSpec = {
  type: "boolean",
  description: "report progress on stderr even when it is not a terminal",
};
