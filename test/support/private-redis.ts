/**
 * A private redis-server on a free port, for tests that need the store to die and come back. Only this
 * process is ever stopped (by its PID); the shared Redis is never touched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { acceptsConnections, freePort } from './tcp-ports.ts';

/**
 * Servers still running when the test process exits (a hook timed out before its kill() ran): killed
 * then, so no redis-server outlives its test run.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class PrivateRedis {
  readonly port: number;
  private readonly extraArgs: readonly string[];
  private child: ChildProcess | undefined;

  private constructor(port: number, extraArgs: readonly string[]) {
    this.port = port;
    this.extraArgs = extraArgs;
  }

  /** `extraArgs`: more redis-server settings, e.g. `['--maxmemory-policy', 'allkeys-lru']`. */
  static async start(extraArgs: readonly string[] = []): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), extraArgs);
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port, without persistence, and waits until it accepts connections. */
  async restart(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        ...this.extraArgs,
      ],
      {
        stdio: 'ignore',
      },
    );
    this.child = child;
    running.add(child);
    child.once('exit', () => running.delete(child));
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await acceptsConnections(this.port)) return;
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      await delay(50);
    }
    throw new Error('redis-server did not start within 5 s');
  }

  /** Stalls the server (SIGSTOP): connections stay open, commands wait unanswered until `resume`. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** Lets a paused server run again (SIGCONT); it then runs every command that waited. */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Kills the server (SIGKILL, as a crash would) and waits for it to exit. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }
}
