/**
 * Least-squares trend lines for the soak's verdicts: the slope of a resource over time, with its
 * standard error and R², so a report says how sure the fit is as well as which way it points.
 */

export interface Point {
  /** Seconds since the run started. */
  t: number;
  value: number;
}

export interface Fit {
  n: number;
  /** Units of `value` per second. */
  slope: number;
  intercept: number;
  /** Standard error of the slope (same units); Infinity with fewer than three points. */
  slopeStdErr: number;
  /** Share of the variance the line explains, 0–1 (1 for a perfect line; 0 when the values are flat). */
  r2: number;
}

/** Ordinary least squares of value on t. Throws with fewer than two points or a single instant. */
export function leastSquares(points: readonly Point[]): Fit {
  const n = points.length;
  if (n < 2) throw new Error(`a trend needs at least two points, got ${n}`);
  const meanT = points.reduce((sum, point) => sum + point.t, 0) / n;
  const meanValue = points.reduce((sum, point) => sum + point.value, 0) / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (const { t, value } of points) {
    sxx += (t - meanT) ** 2;
    sxy += (t - meanT) * (value - meanValue);
    syy += (value - meanValue) ** 2;
  }
  if (sxx === 0) throw new Error('a trend needs points at more than one instant');
  const slope = sxy / sxx;
  const intercept = meanValue - slope * meanT;
  // Residual sum of squares, clamped: rounding can make it a hair below zero for a perfect line.
  const residual = Math.max(0, syy - slope * sxy);
  const slopeStdErr = n > 2 ? Math.sqrt(residual / (n - 2) / sxx) : Number.POSITIVE_INFINITY;
  const r2 = syy === 0 ? 0 : 1 - residual / syy;
  return { n, slope, intercept, slopeStdErr, r2 };
}

/** The points after the warm-up: the first `fraction` of the run's span (by time, not by count). */
export function afterWarmup(points: readonly Point[], fraction: number): Point[] {
  if (points.length === 0) return [];
  const first = points[0]!.t;
  const last = points[points.length - 1]!.t;
  const cut = first + (last - first) * fraction;
  return points.filter((point) => point.t >= cut);
}
