import { describe, expect, it } from 'vitest';
import { LATENCY_BIN_BOUNDS } from '../store/db/repositories/console-overview-repository.ts';
import { overviewWindow, percentile } from './console-overview.ts';

const binOf = (latency: number) => {
  let bin = 0;
  while (bin + 1 < LATENCY_BIN_BOUNDS.length && LATENCY_BIN_BOUNDS[bin + 1]! <= latency) bin++;
  return bin;
};

describe('overview latency percentiles', () => {
  it('uses bins at most ~10 % wide above 10 ms, reaching ten minutes, with a bounded count', () => {
    for (let bin = 11; bin + 1 < LATENCY_BIN_BOUNDS.length; bin++) {
      const lower = LATENCY_BIN_BOUNDS[bin]!;
      expect(LATENCY_BIN_BOUNDS[bin + 1]! / lower, `bin ${bin}`).toBeLessThanOrEqual(1.1 + 1e-9);
    }
    expect(LATENCY_BIN_BOUNDS.at(-1)).toBeGreaterThanOrEqual(600_000);
    expect(LATENCY_BIN_BOUNDS.length).toBeLessThan(160);
  });

  it('interpolates within the bin holding the rank, within 10 % of the exact percentile', () => {
    const latencies = Array.from({ length: 1000 }, (_, index) => 20 + index * 3);
    const counts = new Array<number>(LATENCY_BIN_BOUNDS.length).fill(0);
    for (const latency of latencies) counts[binOf(latency)]!++;
    for (const p of [0.5, 0.9, 0.99]) {
      const exact = latencies[Math.ceil(p * latencies.length) - 1]!;
      expect(Math.abs(percentile(counts, p)! - exact) / exact, `p${p * 100}`).toBeLessThanOrEqual(0.1);
    }
  });

  it('is null without requests', () => {
    expect(percentile(new Array(LATENCY_BIN_BOUNDS.length).fill(0), 0.5)).toBeNull();
  });

  it('refuses an unknown window naming the parameter, and defaults to 24h', () => {
    expect(overviewWindow(undefined)).toBe('24h');
    expect(() => overviewWindow('hasOwnProperty')).toThrow(expect.objectContaining({ param: 'window' }));
  });
});
