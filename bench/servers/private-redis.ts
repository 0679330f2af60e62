/**
 * A private `redis-server` for `--redis` runs: on a free loopback port, without persistence, pinned
 * beside the upstream (a production Redis runs on another machine, not on the gateway's CPU).
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { acceptsConnections, freePort } from '../../test/support/tcp-ports.ts';
import { spawnTracked, stopProcess } from '../run/child-processes.ts';

export interface PrivateRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startPrivateRedis(cpu: number | undefined): Promise<PrivateRedis> {
  const port = await freePort();
  const child: ChildProcess = spawnTracked(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { cpu },
  );
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await acceptsConnections(port)) {
      return { url: `redis://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopProcess(child) };
    }
    if (child.exitCode !== null)
      throw new Error(`redis-server exited with ${child.exitCode} (is it installed?)`);
    await delay(50);
  }
  await stopProcess(child);
  throw new Error('redis-server did not accept connections within 5 s');
}
