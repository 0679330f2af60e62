/**
 * Cleanup for a fault set-up abandoned by a hook or test timeout: its stop() may never run, and the
 * test process's exit must not leave gateways, fake servers' children or schemas behind. An exit handler
 * runs synchronously only, so it SIGKILLs what still runs and drops the schema with psql.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { TEST_DATABASE_URL } from '../../support/test-env.ts';

/** Runs `cleanup` when the test process exits; the returned function unregisters it (after stop()). */
export function onProcessExit(cleanup: () => void): () => void {
  const handler = () => {
    try {
      cleanup();
    } catch {
      // the process is exiting: nothing left to report to
    }
  };
  process.once('exit', handler);
  return () => process.off('exit', handler);
}

/** SIGKILL of a child still running (an exited one is skipped: its PID may be reused). */
export function killIfRunning(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Drops a schema of the shared test database synchronously (psql); errors are the caller's to ignore. */
export function dropSchemaNow(schema: string): void {
  execFileSync('psql', [TEST_DATABASE_URL, '-qc', `DROP SCHEMA IF EXISTS "${schema}" CASCADE`], {
    stdio: 'ignore',
    timeout: 10_000,
  });
}
