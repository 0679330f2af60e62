import { describe, expect, it } from 'vitest';
import { BenchUsageError, parseBenchOptions } from './bench-options.ts';

describe('parseBenchOptions', () => {
  it('defaults to every target and phase, two rounds of 5-second phases', () => {
    const options = parseBenchOptions([]);
    expect(options).toMatchObject({
      targets: ['direct', 'bare', 'switchboard', 'switchboard-limited'],
      phases: [
        'throughput',
        'latency',
        'stream',
        'admission',
        'responses',
        'messages',
        'cached',
        'embeddings',
      ],
      rounds: 2,
      durationSeconds: 5,
      concurrency: 32,
      rates: [200, 1000],
      streamRate: 100,
      pin: true,
      quick: false,
    });
  });

  it('makes --quick one round of 2-second phases, which explicit flags still override', () => {
    expect(parseBenchOptions(['--quick'])).toMatchObject({
      rounds: 1,
      durationSeconds: 2,
      warmupSeconds: 0.5,
    });
    expect(parseBenchOptions(['--quick', '--rounds', '3'])).toMatchObject({ rounds: 3, durationSeconds: 2 });
  });

  it('keeps targets and phases in their canonical order', () => {
    const options = parseBenchOptions(['--targets', 'switchboard,direct', '--phases', 'stream,throughput']);
    expect(options).toMatchObject({ targets: ['direct', 'switchboard'], phases: ['throughput', 'stream'] });
  });

  it('rejects unknown names and out-of-range numbers, naming the flag', () => {
    expect(() => parseBenchOptions(['--targets', 'litellm'])).toThrow(BenchUsageError);
    expect(() => parseBenchOptions(['--targets', 'litellm'])).toThrow(/--targets: unknown 'litellm'/);
    expect(() => parseBenchOptions(['--rates', '200,abc'])).toThrow(/--rates must be an integer/);
    expect(() => parseBenchOptions(['--rounds', '0'])).toThrow(/--rounds/);
    expect(() => parseBenchOptions(['--provider', 'azure'])).toThrow(/--provider must be one of/);
  });

  it('answers help', () => {
    expect(parseBenchOptions(['--help'])).toBe('help');
  });
});
