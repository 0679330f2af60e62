import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { Readiness, type ReadinessProbe } from './readiness.ts';

function probe(name: string, check: () => Promise<void>): ReadinessProbe & { calls: number } {
  const counted = {
    name,
    calls: 0,
    check: async () => {
      counted.calls++;
      await check();
    },
  };
  return counted;
}

describe('readiness', () => {
  it('is ok with every check ready, and reports each check with its state', async () => {
    const readiness = new Readiness({
      probes: [probe('database', async () => {})],
      required: ['database'],
      clock: new ManualClock(),
    });
    const report = await readiness.report();
    expect(report.status).toBe('ok');
    expect(report.checks).toEqual({ database: true });
    expect(report.details.database?.state).toBe('ready');
  });

  // Redis under fail_open: every replica still answers, so readiness must not take them all out of a
  // load balancer; the payload still says Redis is down.
  it('reports an informational check as failed without making the gateway not ready', async () => {
    const report = await new Readiness({
      probes: [
        probe('database', async () => {}),
        probe('redis', async () => {
          throw new Error('connect ECONNREFUSED');
        }),
      ],
      required: ['database'],
      informational: ['redis'],
      clock: new ManualClock(),
    }).report();
    expect(report.status).toBe('ok');
    expect(report.checks).toEqual({ database: true, redis: false });
    expect(report.details.redis?.state).toBe('failed');
  });

  it('is degraded when a check fails, and hides URLs in the reason', async () => {
    const failing = probe('redis', async () => {
      throw new Error('connect ECONNREFUSED redis://:secret@10.0.0.5:6379');
    });
    const report = await new Readiness({
      probes: [failing],
      required: [],
      clock: new ManualClock(),
    }).report();
    expect(report.status).toBe('degraded');
    expect(report.checks.redis).toBe(false);
    expect(report.details.redis?.error).not.toContain('secret');
  });

  it('treats a check that exceeds the deadline as failed', async () => {
    const hanging = probe('database', () => new Promise(() => {}));
    const report = await new Readiness({
      probes: [hanging],
      required: [],
      clock: new ManualClock(),
      deadlineMs: 20,
    }).report();
    expect(report.checks.database).toBe(false);
    expect(report.details.database?.state).toBe('timeout');
  });

  it('treats a required check without a probe as failed, not healthy', async () => {
    const report = await new Readiness({
      probes: [],
      required: ['redis'],
      clock: new ManualClock(),
    }).report();
    expect(report.status).toBe('degraded');
    expect(report.checks.redis).toBe(false);
  });

  it('runs one refresh for concurrent callers and caches the result for one second', async () => {
    const clock = new ManualClock();
    const database = probe('database', async () => {});
    const readiness = new Readiness({ probes: [database], required: [], clock });
    await Promise.all([readiness.report(), readiness.report(), readiness.report()]);
    expect(database.calls).toBe(1);
    clock.advance(999);
    await readiness.report();
    expect(database.calls).toBe(1);
    clock.advance(2);
    await readiness.report();
    expect(database.calls).toBe(2);
  });

  it('reports not ready while draining, bypassing a cached success', async () => {
    const readiness = new Readiness({
      probes: [probe('database', async () => {})],
      required: [],
      clock: new ManualClock(),
    });
    expect((await readiness.report()).status).toBe('ok');
    readiness.startDraining();
    const report = await readiness.report();
    expect(report.status).toBe('degraded');
    expect(report.details.draining?.state).toBe('draining');
  });
});
