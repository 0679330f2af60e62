/**
 * Shutdown never waits on a stalled database past its deadline (issue 31): a real gateway stopped with
 * SIGTERM while spend_logs is locked exits while the lock is still held, says at warn level what it
 * waited for, spills the spend it could not write, and the next start writes it: the rows of the
 * served requests are all there. The exit time itself is measured in the fault suite
 * (test/faults/shutdown-locked-spend.test.ts); here only the order of events is asserted.
 */
import { describe, expect, it } from 'vitest';
import { runLockedShutdown } from '../support/locked-shutdown.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

/** Positions of each message in the output, in the order given (-1 when missing). */
function positions(output: string, messages: readonly string[]): number[] {
  return messages.map((message) => output.indexOf(message));
}

describe.runIf(await realBackendsAvailable())('shutdown with spend_logs locked', () => {
  it('exits while the table is still locked, logging what it waited for, and the next start writes the spilled spend', async () => {
    const run = await runLockedShutdown({ graceSeconds: 1, giveUpMs: 30_000 });
    expect(run.exitedUnderLock, `the process exited while spend_logs was locked:\n${run.output}`).toBe(true);
    expect(run.exitCode).toBe(0);
    const order = positions(run.output, [
      'draining in-flight requests before exit',
      'shutdown is waiting for the spend flush',
      'shutdown gave up waiting for the spend flush at its deadline',
      'spend records not written by the shutdown deadline: spilled to a local file',
      '"msg":"stopped"',
    ]);
    expect(
      order.every((at) => at >= 0),
      run.output,
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(run.served).toBe(5);
    expect(run.spill).toEqual([{ name: expect.stringMatching(/^spend-.*\.jsonl$/), mode: 0o600 }]);
    expect(run.spillFolderMode).toBe(0o700);
    expect(run.rowsAfterRestart, 'every served request has its spend row after the restart').toBe(run.served);
    expect(run.restartOutput).toContain('spilled spend records written to the telemetry database');
  }, 90_000);
});
