import { describe, expect, it } from 'vitest';
import type { PhaseMeasurement } from './run-phase.ts';
import { mergeSlices } from './throughput-slices.ts';

const slice = (fields: Partial<PhaseMeasurement>): PhaseMeasurement => ({
  target: 'switchboard',
  round: 1,
  phase: 'throughput',
  requests: 0,
  non2xx: 0,
  errors: 0,
  dropped: 0,
  ...fields,
});

describe('mergeSlices', () => {
  const merged = mergeSlices([
    slice({
      requests: 5000,
      servedRequests: 5000,
      seconds: 1,
      cpuMicrosecondsPerRequest: 100,
      latency: { p50: 1000, p90: 2000, p99: 9000 },
      stealPercent: 0,
      otherLoadPercent: 40,
      peakResidentKilobytes: 90_000,
      quietWaitMs: 250,
    }),
    slice({
      requests: 2990,
      non2xx: 10,
      servedRequests: 3000,
      seconds: 1,
      cpuMicrosecondsPerRequest: 140,
      latency: { p50: 3000, p90: 4000, p99: 5000 },
      stealPercent: 2,
      otherLoadPercent: 0,
      peakResidentKilobytes: 95_000,
      errors: 1,
      firstError: 'HTTP 500',
    }),
  ]);

  it('adds the counts and divides every answer by every second', () => {
    expect(merged).toMatchObject({ requests: 7990, non2xx: 10, errors: 1, servedRequests: 8000, seconds: 2 });
    expect(merged.requestsPerSecond).toBe(4000);
  });

  it('weights CPU per request by the requests served', () => {
    expect(merged.cpuMicrosecondsPerRequest).toBe(115);
  });

  it('averages steal and other load over time, keeps the highest RSS and sums the waits', () => {
    expect(merged).toMatchObject({
      stealPercent: 1,
      otherLoadPercent: 20,
      peakResidentKilobytes: 95_000,
      quietWaitMs: 250,
      firstError: 'HTTP 500',
    });
  });

  it('takes the median of the tool latency percentiles', () => {
    expect(merged.latency).toEqual({ p50: 2000, p90: 3000, p99: 7000 });
  });
});
