/**
 * The soak's pass/fail rules as pure functions over what was measured: trends of a resource after the
 * warm-up (a slope, not a snapshot), descriptors back to their baseline once the load stopped, and the
 * requests' errors and deadlines. run.ts gathers the numbers; these decide.
 */
import { afterWarmup, leastSquares, type Point } from './slope.ts';

export interface Verdict {
  name: string;
  pass: boolean;
  /** The measured figure, as a reader wants to see it (`+3.1 MB/10 min ± 1.2`). */
  measured: string;
  /** The bound it was held to (`≤ 24 MB/10 min`). */
  bound: string;
}

export interface TrendVerdict extends Verdict {
  /** Slope and its standard error extrapolated to ten minutes, in the series' unit. */
  slopePerTenMinutes: number;
  stdErrPerTenMinutes: number;
  r2: number;
  points: number;
}

/** Fewer samples than this after the warm-up cannot show a trend: the verdict fails rather than guess. */
export const MIN_TREND_POINTS = 8;

const TEN_MINUTES = 600;

export interface TrendRule {
  name: string;
  unit: string;
  points: readonly Point[];
  /** Share of the run (by time) left out before fitting: start-up growth of caches, JIT and heap. */
  warmupFraction: number;
  /** Largest growth allowed, extrapolated to ten minutes, in `unit`. */
  maxGrowthPerTenMinutes: number;
}

/** Fails when the least-squares slope after the warm-up, extrapolated to ten minutes, passes the bound. */
export function trendVerdict(rule: TrendRule): TrendVerdict {
  const kept = afterWarmup(rule.points, rule.warmupFraction);
  const bound = `≤ ${format(rule.maxGrowthPerTenMinutes)} ${rule.unit}/10 min`;
  if (kept.length < MIN_TREND_POINTS) {
    return {
      name: rule.name,
      pass: false,
      measured: `${kept.length} samples after warm-up (need ${MIN_TREND_POINTS})`,
      bound,
      slopePerTenMinutes: Number.NaN,
      stdErrPerTenMinutes: Number.NaN,
      r2: Number.NaN,
      points: kept.length,
    };
  }
  const fit = leastSquares(kept);
  const slopePerTenMinutes = fit.slope * TEN_MINUTES;
  const stdErrPerTenMinutes = fit.slopeStdErr * TEN_MINUTES;
  return {
    name: rule.name,
    pass: slopePerTenMinutes <= rule.maxGrowthPerTenMinutes,
    measured: `${signed(slopePerTenMinutes)} ± ${format(stdErrPerTenMinutes)} ${rule.unit}/10 min (R² ${fit.r2.toFixed(2)}, n ${fit.n})`,
    bound,
    slopePerTenMinutes,
    stdErrPerTenMinutes,
    r2: fit.r2,
    points: fit.n,
  };
}

/** Fails when a count after the load (once settled) is above its count before the load by more than `allowance`. */
export function returnsToBaseline(name: string, before: number, after: number, allowance: number): Verdict {
  return {
    name,
    pass: after - before <= allowance,
    measured: `${before} before, ${after} after`,
    bound: `after ≤ before + ${allowance}`,
  };
}

export interface OutcomeCounts {
  requests: number;
  /** Requests that did not succeed, deadline misses included. */
  errors: number;
}

/** Fails when the share of failed requests passes `maxErrorRatio`, or when nothing was sent at all. */
export function errorRateVerdict(name: string, counts: OutcomeCounts, maxErrorRatio: number): Verdict {
  const ratio = counts.requests === 0 ? 1 : counts.errors / counts.requests;
  return {
    name,
    pass: counts.requests > 0 && ratio <= maxErrorRatio,
    measured: `${counts.errors} of ${counts.requests} (${(ratio * 100).toFixed(3)} %)`,
    bound: `≤ ${(maxErrorRatio * 100).toFixed(3)} %`,
  };
}

/** Fails when any request ran past its deadline (a client timeout, or a slowest request above it). */
export function deadlineVerdict(
  name: string,
  timeouts: number,
  slowestMs: number,
  deadlineMs: number,
): Verdict {
  return {
    name,
    pass: timeouts === 0 && slowestMs <= deadlineMs,
    measured: `${timeouts} past it, slowest ${Math.round(slowestMs)} ms`,
    bound: `none past ${deadlineMs} ms`,
  };
}

/** A fixed-width table of verdicts for the console. */
export function renderVerdicts(verdicts: readonly Verdict[]): string {
  const rows = verdicts.map((verdict) => [
    verdict.pass ? 'PASS' : 'FAIL',
    verdict.name,
    verdict.measured,
    verdict.bound,
  ]);
  const header = ['', 'check', 'measured', 'bound'];
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

function format(value: number): string {
  return Math.abs(value) >= 10 ? value.toFixed(1) : value.toPrecision(2);
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${format(value)}`;
}
