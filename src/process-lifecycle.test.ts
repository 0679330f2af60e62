/**
 * Signals from the first instruction (issue 31), the lifecycle's rules: a signal during start-up aborts
 * the start-up signal, closes what start-up opened (last opened first) and exits with the start-up
 * code once start-up unwound, or at its bound; once running, a signal goes to the command's stop, once.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { type LifecycleLog, ProcessLifecycle } from './process-lifecycle.ts';

function lifecycleWith(stopWithinMs = 5_000) {
  const signals = new EventEmitter();
  const events: string[] = [];
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((resolve) => (exited = resolve));
  const log: LifecycleLog = {
    info: (_fields, message) => events.push(message),
    warn: (_fields, message) => events.push(`warn: ${message}`),
    flush: () => events.push('flush'),
  };
  const lifecycle = new ProcessLifecycle({
    exit: (code) => {
      events.push(`exit ${code}`);
      exited(code);
    },
    log,
    stopWithinMs,
  });
  lifecycle.install(signals as unknown as Pick<NodeJS.Process, 'on'>);
  return { lifecycle, signals, events, exit };
}

describe('the process lifecycle', () => {
  it('during start-up: aborts, closes what was opened last first, waits for start-up to unwind, then exits', async () => {
    const { lifecycle, signals, events, exit } = lifecycleWith();
    let unwind: () => void = () => {};
    const starting = new Promise<void>((_resolve, reject) => {
      lifecycle.signal.addEventListener('abort', () => (unwind = () => reject(lifecycle.signal.reason)));
    });
    lifecycle.start(starting).catch(() => {});
    lifecycle.track(async () => void events.push('close database'));
    lifecycle.track(async () => void events.push('close store'));
    signals.emit('SIGTERM');
    expect(lifecycle.signal.aborted).toBe(true);
    expect(lifecycle.isStopping).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).not.toContain('exit 0'); // start-up has not unwound yet
    unwind();
    expect(await exit).toBe(0);
    expect(events).toEqual([
      'stopping during start-up: closing what was opened',
      'close store',
      'close database',
      'stopped during start-up',
      'flush',
      'exit 0',
    ]);
  });

  it('exits with the interrupted code (migrate: 1), and at its bound when start-up does not unwind', async () => {
    const { lifecycle, signals, events, exit } = lifecycleWith(20);
    lifecycle.exitCodeWhenInterrupted(1);
    lifecycle.start(new Promise(() => {}));
    signals.emit('SIGINT');
    expect(await exit).toBe(1);
    expect(events).toContain('warn: start-up did not unwind in time; exiting with it unfinished');
  });

  it('closes at once what start-up opens after the stop began', async () => {
    const { lifecycle, signals, events } = lifecycleWith();
    lifecycle.start(new Promise(() => {}));
    signals.emit('SIGTERM');
    lifecycle.track(async () => void events.push('close late store'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toContain('close late store');
  });

  it("once running, hands the first signal to the command's stop and ignores the next ones", () => {
    const { lifecycle, signals, events } = lifecycleWith();
    const stops: string[] = [];
    lifecycle.track(async () => void events.push('close database'));
    lifecycle.running((signal) => stops.push(signal));
    signals.emit('SIGTERM');
    signals.emit('SIGINT');
    expect(stops).toEqual(['SIGTERM']);
    expect(events).toEqual([]); // the running gateway's own close closes the database, not the lifecycle
  });
});
