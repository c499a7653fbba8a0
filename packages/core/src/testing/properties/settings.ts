/** The seed every property runs with unless `FC_SEED` or the wiring says otherwise (#14). */
export const DEFAULT_SEED = 14;

/** How a property suite runs: fast-check's seed and number of runs per property. */
export interface PropertySettings {
  seed: number;
  numRuns: number;
}

/**
 * The seed and runs of a property: `FC_SEED` and `FC_RUNS` from the environment win (to reproduce
 * a CI failure, or to search longer), then the wiring's options, then the defaults.
 */
export function propertySettings(
  options: { seed?: number | undefined; numRuns?: number | undefined },
  numRuns: number,
): PropertySettings {
  return {
    seed: integerFromEnv("FC_SEED") ?? options.seed ?? DEFAULT_SEED,
    numRuns: integerFromEnv("FC_RUNS") ?? options.numRuns ?? numRuns,
  };
}

function integerFromEnv(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || (name === "FC_RUNS" && value < 1)) {
    throw new Error(
      `${name}=${JSON.stringify(text)} is not ${name === "FC_RUNS" ? "a positive" : "an"} integer.`,
    );
  }
  return value;
}
