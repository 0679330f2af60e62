/** Latency distributions: nearest-rank percentiles over recorded samples (any unit, usually µs). */

export interface Distribution {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/**
 * The nearest-rank percentile of ascending `sorted` values: the smallest value with at least
 * `fraction` of the samples at or below it. NaN for no samples.
 */
export function percentile(sorted: ArrayLike<number>, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (fraction <= 0) return sorted[0]!;
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Summarises samples (in any order); undefined when there are none. */
export function summarize(samples: ArrayLike<number>): Distribution | undefined {
  if (samples.length === 0) return undefined;
  const sorted = Float64Array.from(samples).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1]!,
  };
}
