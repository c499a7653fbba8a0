import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isPostelError } from "../../errors.js";
import type { PropertySettings } from "./settings.js";

/** What one property tried and found, for the test log and the figures file. */
export interface PropertyFigures {
  suite: string;
  property: string;
  seed: number;
  numRuns: number;
  /** Inputs tried (bad inputs, or mutated requests); includes shrinking when the property failed. */
  tried: number;
  /** Refused with a coded `PostelError`, as they must be. */
  refused: number;
  /** Accepted, as they must be: unmutated requests and mutations that leave the signed content intact. */
  accepted: number;
  /** Accepted although they must be refused. Must be 0. */
  falseAccepts: number;
  /** Raw errors without a Postel code (crashes). Must be 0. */
  uncoded: number;
  /** Refused, but the storage changed anyway. Must be 0. */
  writes: number;
  /** Refusals by code. */
  codes: Record<string, number>;
  ms: number;
}

/** Fresh, zeroed figures for one property. */
export function newFigures(suite: string, property: string, settings: PropertySettings): PropertyFigures {
  return {
    suite,
    property,
    ...settings,
    tried: 0,
    refused: 0,
    accepted: 0,
    falseAccepts: 0,
    uncoded: 0,
    writes: 0,
    codes: {},
    ms: 0,
  };
}

/** Counts a refusal: by its code when it is a `PostelError`, else as an uncoded crash. */
export function countRefusal(figures: PropertyFigures, error: unknown): void {
  if (!isPostelError(error)) {
    figures.uncoded++;
    return;
  }
  figures.refused++;
  figures.codes[error.code] = (figures.codes[error.code] ?? 0) + 1;
}

/** Where figures go by default: `.generated/property-figures/` of the package under test (git-ignored). */
export const DEFAULT_FIGURES_DIR = join(process.cwd(), ".generated", "property-figures");

/** Prints one line per property and writes them all to `<dir>/<file>.json` (unless `dir` is false). */
export function reportFigures(all: readonly PropertyFigures[], file: string, dir: string | false): void {
  for (const f of all) {
    console.log(
      `[property] ${f.suite} › ${f.property}: ${f.tried} tried, ${f.refused} refused, ${f.accepted} accepted, ` +
        `${f.falseAccepts} false accepts, ${f.uncoded} uncoded errors, ${f.writes} writes ` +
        `(seed ${f.seed}, ${f.numRuns} runs, ${(f.ms / 1000).toFixed(1)} s)`,
    );
  }
  if (dir === false || all.length === 0) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${file}.json`), `${JSON.stringify(all, null, 2)}\n`);
}

/** A file name for a suite: `"input properties: postgres"` → `input-properties-postgres`. */
export function figuresFile(suite: string): string {
  return suite
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}
