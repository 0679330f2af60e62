/**
 * Shutdown with a stalled database, measured (issue 31): a real gateway (legacy spend, 5 s grace)
 * stopped with SIGTERM while a second connection holds spend_logs in ACCESS EXCLUSIVE mode must exit
 * within the grace period plus one second (before: alive 25 s after SIGTERM, exiting only when the
 * lock went), and the spend of every served request must be in spend_logs once the next start has
 * written the spill. The main suite checks the order of events of the same run
 * (test/e2e/shutdown-locked-spend.test.ts); this file holds the wall-clock bound.
 */
import { describe, expect, it } from 'vitest';
import { runLockedShutdown } from '../support/locked-shutdown.ts';
import { realBackendsAvailable } from '../support/test-env.ts';
import { recordScenario } from './support/fault-report.ts';

const GRACE_SECONDS = 5;

describe.runIf(await realBackendsAvailable())('SIGTERM with spend_logs locked', () => {
  it("exits within the grace period plus one second, and the next start writes every served request's spend", async () => {
    const run = await runLockedShutdown({ graceSeconds: GRACE_SECONDS, giveUpMs: 30_000 });
    const exitSeconds = run.exitMs === null ? null : Math.round(run.exitMs / 100) / 10;
    recordScenario({
      group: 'PostgreSQL',
      scenario: `spend_logs locked (ACCESS EXCLUSIVE) when SIGTERM arrives, ${GRACE_SECONDS} s grace`,
      mode: 'legacy',
      requests: run.served,
      served: run.served,
      errorsByStatus: {},
      recoverySeconds: null,
      readinessSeconds: null,
      spend:
        run.rowsAfterRestart === run.served
          ? 'exact'
          : `${run.served - run.rowsAfterRestart} served without a row`,
      notes:
        `exited ${exitSeconds ?? 'not within 30'} s after SIGTERM with the lock still held; ` +
        `${run.spill.length} spill file written and replayed by the next start`,
    });
    expect(run.exitedUnderLock, run.output).toBe(true);
    expect(run.exitCode).toBe(0);
    expect(run.exitMs!, 'exit within grace + 1 s').toBeLessThanOrEqual((GRACE_SECONDS + 1) * 1000);
    expect(run.rowsAfterRestart, 'every served request has its spend row').toBe(run.served);
  }, 120_000);
});
