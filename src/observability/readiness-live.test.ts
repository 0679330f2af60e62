/**
 * Spec (readiness): a dead or stale required worker makes the process unready. Its probe is `live`, so
 * its failure bypasses a cached success instead of waiting out the cache; other probes stay cached.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { Readiness } from './readiness.ts';

describe('readiness with a live probe', () => {
  it('reports a live probe failing right after a cached success, without re-running cached probes', async () => {
    let databaseChecks = 0;
    let workerAlive = true;
    const readiness = new Readiness({
      probes: [{ name: 'database', check: async () => void databaseChecks++ }],
      required: ['database'],
      clock: new ManualClock(),
      cacheMs: 60_000,
    });
    readiness.addProbe(
      {
        name: 'batch_worker',
        live: true,
        check: async () => {
          if (!workerAlive) throw new Error('the batch worker is not running');
        },
      },
      true,
    );
    expect((await readiness.report()).status).toBe('ok');
    expect((await readiness.report()).status).toBe('ok');
    expect(databaseChecks).toBe(1); // the second report was the cached one
    workerAlive = false;
    const report = await readiness.report();
    expect(report.status).toBe('degraded');
    expect(report.details.batch_worker).toEqual({
      state: 'failed',
      error: 'the batch worker is not running',
    });
  });

  it('keeps serving a cached success while the live probe passes', async () => {
    let checks = 0;
    const readiness = new Readiness({
      probes: [{ name: 'database', check: async () => void checks++ }],
      required: [],
      clock: new ManualClock(),
      cacheMs: 60_000,
    });
    readiness.addProbe({ name: 'batch_worker', live: true, check: async () => {} }, true);
    await readiness.report();
    await readiness.report();
    expect(checks).toBe(1);
  });
});
