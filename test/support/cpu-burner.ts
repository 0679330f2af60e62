/**
 * A loaded machine on demand: child processes that spin on the CPU until stopped, for tests that must
 * hold while the gateway, Redis and the test itself compete for cores. Only these children are killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class CpuBurner {
  private readonly children: ChildProcess[];

  private constructor(children: ChildProcess[]) {
    this.children = children;
  }

  /** Starts `processes` spinning children (default: one per core). */
  static start(processes = availableParallelism()): CpuBurner {
    const children = Array.from({ length: processes }, () => {
      const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
      running.add(child);
      child.once('exit', () => running.delete(child));
      return child;
    });
    return new CpuBurner(children);
  }

  /** True while every child still spins (a test asserts its load was really there). */
  get burning(): boolean {
    return this.children.every((child) => child.exitCode === null && child.signalCode === null);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
  }
}
