import { describe, expect, it } from 'vitest';
import { percentile, summarize } from './percentiles.ts';

describe('percentile', () => {
  it('takes the nearest rank: the smallest value with at least the fraction at or below it', () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(sorted, 0.5)).toBe(5);
    expect(percentile(sorted, 0.9)).toBe(9);
    expect(percentile(sorted, 0.99)).toBe(10);
    expect(percentile(sorted, 0.51)).toBe(6);
  });

  it('handles one sample, the extremes and no samples', () => {
    expect(percentile([7], 0.5)).toBe(7);
    expect(percentile([1, 2, 3], 0)).toBe(1);
    expect(percentile([1, 2, 3], 1)).toBe(3);
    expect(percentile([], 0.5)).toBeNaN();
  });

  it('puts p99 of 1000 samples on the 990th value', () => {
    const sorted = Array.from({ length: 1000 }, (_, index) => index + 1);
    expect(percentile(sorted, 0.99)).toBe(990);
  });
});

describe('summarize', () => {
  it('sorts numerically, not as strings', () => {
    const summary = summarize([100, 9, 20, 3, 1000])!;
    expect(summary).toEqual({ count: 5, p50: 20, p90: 1000, p99: 1000, max: 1000 });
  });

  it('returns undefined for no samples', () => {
    expect(summarize([])).toBeUndefined();
  });
});
