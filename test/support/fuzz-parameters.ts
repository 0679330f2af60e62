/**
 * fast-check parameters of the fuzz and property tests (issue 18). A failure prints its seed and
 * path; FUZZ_SEED and FUZZ_PATH replay exactly that case, FUZZ_RUNS_SCALE multiplies every property's runs.
 */
import type { Parameters } from 'fast-check';

export function fuzzParameters<T>(numRuns: number): Parameters<T> {
  const scale = Number(process.env.FUZZ_RUNS_SCALE ?? 1);
  const seed = process.env.FUZZ_SEED;
  const path = process.env.FUZZ_PATH;
  return {
    numRuns: Math.max(1, Math.round(numRuns * (Number.isFinite(scale) ? scale : 1))),
    ...(seed ? { seed: Number(seed) } : {}),
    ...(path ? { path } : {}),
    // No time limit: fast-check would count an interrupted run as passed with fewer runs than asked on
    // a slow machine. numRuns bounds the work; only a failure's shrinking can take longer.
    endOnFailure: false,
  };
}
