import { describe, expect, it } from 'vitest';
import {
  foreignPercent,
  parsePeakResidentKilobytes,
  parseProcessStat,
  parseSystemStat,
  stealPercent,
} from './proc-stats.ts';

describe('parseProcessStat', () => {
  it('adds utime and stime (fields 14 and 15)', () => {
    const line =
      '16213 (node) R 16209 16209 13523 0 -1 4194304 101 0 0 0 250 37 0 0 20 0 1 0 174212 3133440 415 0';
    expect(parseProcessStat(line)).toEqual({ ticks: 287, childTicks: 0 });
  });

  it('survives a command name with spaces and parentheses', () => {
    const line = '42 (my (odd) name) S 1 42 42 0 -1 0 0 0 0 0 11 22 5 6 20 0 1 0 0 0 0 0';
    expect(parseProcessStat(line)).toEqual({ ticks: 33, childTicks: 11 });
  });

  it('throws on a line it does not understand', () => {
    expect(() => parseProcessStat('garbage')).toThrow(/format/);
  });
});

describe('parsePeakResidentKilobytes', () => {
  it('reads VmHWM, not VmRSS or VmPeak', () => {
    const status = 'Name:\tnode\nVmPeak:\t 999999 kB\nVmHWM:\t   81234 kB\nVmRSS:\t   70000 kB\n';
    expect(parsePeakResidentKilobytes(status)).toBe(81_234);
  });

  it('is undefined without the line', () => {
    expect(parsePeakResidentKilobytes('Name:\tkthread\n')).toBeUndefined();
  });
});

describe('parseSystemStat and stealPercent', () => {
  const before = parseSystemStat(
    'cpu  100 0 50 800 10 0 5 35 7 0\ncpu0 50 0 25 400 5 0 2 18 0 0\ncpu1 50 0 25 400 5 0 3 17 0 0\nintr 1 2 3\n',
  );
  const after = parseSystemStat(
    'cpu  200 0 100 1600 20 0 10 70 9 0\ncpu0 100 0 50 800 10 0 4 36 0 0\ncpu1 100 0 50 800 10 0 6 34 0 0\n',
  );

  it('sums the eight accounted fields and leaves guest time out; busy is user, nice and system', () => {
    expect(before.get('cpu')).toEqual({ total: 1000, busy: 150, steal: 35 });
    expect([...before.keys()]).toEqual(['cpu', 'cpu0', 'cpu1']);
  });

  it('gives steal as a share of the ticks between two readings', () => {
    expect(stealPercent(before.get('cpu')!, after.get('cpu')!)).toBeCloseTo(3.5);
    expect(stealPercent(before.get('cpu1')!, after.get('cpu1')!)).toBeCloseTo(3.4);
  });

  it('is 0 when no time passed', () => {
    expect(stealPercent(before.get('cpu')!, before.get('cpu')!)).toBe(0);
  });

  it('counts as foreign the busy ticks our processes do not account for', () => {
    // 150 busy ticks of 1000 between the readings; ours account for 50.
    expect(foreignPercent(before.get('cpu')!, after.get('cpu')!, 50)).toBeCloseTo(10);
    expect(foreignPercent(before.get('cpu')!, after.get('cpu')!, 400)).toBe(0);
  });
});
