import { describe, expect, it } from 'vitest';
import type { PhaseMeasurement } from '../run/run-phase.ts';
import { summarizeTargets } from './target-summary.ts';

const phase = (fields: Partial<PhaseMeasurement> & Pick<PhaseMeasurement, 'target' | 'round' | 'phase'>) =>
  ({ requests: 100, non2xx: 0, errors: 0, dropped: 0, ...fields }) as PhaseMeasurement;

describe('summarizeTargets', () => {
  const measurements = [
    phase({ target: 'direct', round: 1, phase: 'throughput', requestsPerSecond: 9000 }),
    phase({ target: 'bare', round: 1, phase: 'throughput', requestsPerSecond: 4000 }),
    phase({ target: 'switchboard', round: 1, phase: 'throughput', requestsPerSecond: 2600 }),
    phase({ target: 'bare', round: 2, phase: 'throughput', requestsPerSecond: 2000 }),
    phase({ target: 'switchboard', round: 2, phase: 'throughput', requestsPerSecond: 1800, errors: 2 }),
    phase({
      target: 'direct',
      round: 1,
      phase: 'latency',
      rate: 200,
      latency: { p50: 300, p90: 0, p99: 900 },
    }),
    phase({
      target: 'switchboard',
      round: 1,
      phase: 'latency',
      rate: 200,
      latency: { p50: 1100, p90: 0, p99: 2000 },
      cpuMicrosecondsPerRequest: 300,
    }),
    phase({
      target: 'switchboard',
      round: 1,
      phase: 'latency',
      rate: 1000,
      latency: { p50: 900, p90: 0, p99: 5000 },
      cpuMicrosecondsPerRequest: 200,
      stealPercent: 4,
      peakResidentKilobytes: 90_000,
    }),
    phase({
      target: 'direct',
      round: 1,
      phase: 'stream',
      firstByte: { count: 1, p50: 500, p90: 0, p99: 700, max: 0 },
    }),
    phase({
      target: 'switchboard',
      round: 1,
      phase: 'stream',
      firstByte: { count: 1, p50: 800, p90: 0, p99: 1500, max: 0 },
      latency: { p50: 40_000, p90: 0, p99: 0 },
      peakResidentKilobytes: 95_000,
    }),
    phase({
      target: 'direct',
      round: 1,
      phase: 'responses',
      rate: 200,
      latency: { p50: 310, p90: 0, p99: 0 },
    }),
    phase({
      target: 'switchboard',
      round: 1,
      phase: 'responses',
      rate: 200,
      latency: { p50: 1000, p90: 0, p99: 0 },
    }),
    phase({
      target: 'switchboard',
      round: 1,
      phase: 'messages',
      rate: 200,
      latency: { p50: 990, p90: 0, p99: 0 },
    }),
    phase({
      target: 'direct',
      round: 1,
      phase: 'embeddings',
      rate: 200,
      latency: { p50: 450, p90: 0, p99: 0 },
    }),
    phase({
      target: 'switchboard',
      round: 1,
      phase: 'embeddings',
      rate: 200,
      latency: { p50: 1250, p90: 0, p99: 0 },
    }),
    phase({
      target: 'switchboard',
      round: 1,
      phase: 'cached',
      rate: 200,
      latency: { p50: 400, p90: 0, p99: 0 },
    }),
  ];
  const summaries = summarizeTargets(measurements);
  const find = (target: string, round: number) =>
    summaries.find((s) => s.target === target && s.round === round)!;

  it('orders by target, then round', () => {
    expect(summaries.map((s) => `${s.target}/${s.round}`)).toEqual([
      'direct/1',
      'bare/1',
      'bare/2',
      'switchboard/1',
      'switchboard/2',
    ]);
  });

  it('compares throughput with the bare proxy of the same round only', () => {
    expect(find('switchboard', 1).throughputVsBare).toBeCloseTo(0.65);
    expect(find('switchboard', 2).throughputVsBare).toBeCloseTo(0.9);
  });

  it('adds latency over direct at the same rate and round, and leaves it out without a reference', () => {
    const switchboard = find('switchboard', 1);
    expect(switchboard.addedP50ByRate.get(200)).toBe(800);
    expect(switchboard.addedP50ByRate.has(1000)).toBe(false);
    expect(switchboard.addedFirstByteP50).toBe(300);
    expect(switchboard.lastByteP50).toBe(40_000);
  });

  it('adds the translated endpoints’ latency over direct answering the same conversation as chat', () => {
    const switchboard = find('switchboard', 1);
    expect(switchboard.addedP50ByFormat.get('responses')).toBe(690);
    expect(switchboard.addedP50ByFormat.has('messages')).toBe(false);
    // The embeddings phase: the same request to both, so the same subtraction.
    expect(switchboard.addedP50ByFormat.get('embeddings')).toBe(800);
    expect(switchboard.cachedP50).toBe(400);
    // The translated phases leave the chat latency figures alone.
    expect(switchboard.latencyByRate.get(200)?.p50).toBe(1100);
  });

  it('takes CPU per request from the highest rate, the peak RSS and the worst steal, and counts failures', () => {
    const switchboard = find('switchboard', 1);
    expect(switchboard.cpuMicrosecondsPerRequest).toBe(200);
    expect(switchboard.peakResidentKilobytes).toBe(95_000);
    expect(switchboard.stealPercentMax).toBe(4);
    expect(find('switchboard', 2).failures).toBe(2);
  });

  it('falls back to the throughput phase for CPU per request when no latency phase ran', () => {
    const [only] = summarizeTargets([
      phase({
        target: 'bare',
        round: 1,
        phase: 'throughput',
        requestsPerSecond: 1,
        cpuMicrosecondsPerRequest: 45,
      }),
    ]);
    expect(only!.cpuMicrosecondsPerRequest).toBe(45);
  });
});
