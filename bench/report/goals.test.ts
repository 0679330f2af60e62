import { describe, expect, it } from 'vitest';
import { evaluateGoals } from './goals.ts';
import type { TargetSummary } from './target-summary.ts';

const summary = (
  fields: Partial<TargetSummary> & Pick<TargetSummary, 'target' | 'round'>,
): TargetSummary => ({
  latencyByRate: new Map(),
  addedP50ByRate: new Map(),
  latencyByFormat: new Map(),
  addedP50ByFormat: new Map(),
  failures: 0,
  ...fields,
});

describe('evaluateGoals', () => {
  const summaries = [
    summary({
      target: 'switchboard',
      round: 1,
      throughputVsBare: 0.64,
      addedP50ByRate: new Map([[200, 400]]),
      latencyByRate: new Map([[200, { p50: 900, p99: 3000 }]]),
      addedFirstByteP50: 1200,
      addedP50ByFormat: new Map([['responses', 700]]),
      cachedP50: 450,
      peakResidentKilobytes: 100_000,
    }),
    summary({
      target: 'switchboard',
      round: 2,
      throughputVsBare: 0.55,
      addedP50ByRate: new Map([[200, 600]]),
      latencyByRate: new Map([[200, { p50: 1000, p99: 3000 }]]),
      addedFirstByteP50: 1100,
      addedP50ByFormat: new Map([['responses', 1200]]),
      peakResidentKilobytes: 140_000,
    }),
    summary({
      target: 'switchboard-limited',
      round: 1,
      latencyByRate: new Map([[200, { p50: 1300, p99: 0 }]]),
    }),
    summary({
      target: 'switchboard-limited',
      round: 2,
      latencyByRate: new Map([[200, { p50: 1600, p99: 0 }]]),
    }),
  ];
  const goals = evaluateGoals(summaries, 2);
  const goal = (start: string) => goals.find((g) => g.goal.startsWith(start))!;

  it('passes a goal that holds in every round and calls one that holds in some mixed', () => {
    expect(goal('Added p50')).toEqual({
      goal: 'Added p50 < 1 ms at 200 req/s',
      perRound: ['0.40 ms', '0.60 ms'],
      verdict: 'pass',
    });
    expect(goal('Throughput')).toMatchObject({ perRound: ['64%', '55%'], verdict: 'mixed' });
    expect(goal('Added streaming')).toMatchObject({ verdict: 'fail' });
  });

  it('judges the translated endpoints by the chat path goal, and a phase not run as not measured', () => {
    expect(goal('Added p50 < 1 ms at 200 req/s on /v1/responses')).toMatchObject({
      perRound: ['0.70 ms', '1.20 ms'],
      verdict: 'mixed',
    });
    expect(goal('Added p50 < 1 ms at 200 req/s on /v1/messages')).toMatchObject({ verdict: 'not measured' });
    expect(goal('Added p50 < 1 ms at 200 req/s on /v1/embeddings')).toMatchObject({
      verdict: 'not measured',
    });
  });

  it('judges cache hits against the pass-through latency of the same round', () => {
    expect(goal('Cache hit p50')).toMatchObject({ perRound: ['50%', '—'], verdict: 'pass' });
  });

  it('judges peak RSS in decimal megabytes: 140,000 kB is 143 MB, under 150', () => {
    expect(goal('Peak RSS')).toMatchObject({ perRound: ['102 MB', '143 MB'], verdict: 'pass' });
  });

  it('measures admission cost as the limited key p50 minus the unlimited key p50', () => {
    expect(goal('Admission cost')).toMatchObject({ perRound: ['0.40 ms', '0.60 ms'], verdict: 'mixed' });
  });

  it('prefers the admission phase, where the keys alternate, over the separate phases', () => {
    const withAdmission = summaries.map((s) =>
      s.target === 'switchboard-limited' && s.round === 1
        ? { ...s, admission: { limitedP50: 700, unlimitedP50: 650 } }
        : s,
    );
    const admission = evaluateGoals(withAdmission, 2).find((g) => g.goal.startsWith('Admission cost'))!;
    expect(admission.perRound).toEqual(['0.05 ms', '0.60 ms']);
  });

  it('says not measured when a target is missing', () => {
    const alone = evaluateGoals([summary({ target: 'switchboard', round: 1 })], 1);
    expect(alone.every((g) => g.verdict === 'not measured')).toBe(true);
    expect(alone[0]!.perRound).toEqual(['—']);
  });
});
