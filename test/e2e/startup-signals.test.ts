/**
 * Signals from the first instruction (issue 31): a process stopped while it is still starting (waiting
 * for another replica's migrations, or for a database that accepts connections but never answers)
 * exits promptly and cleanly, closing what it opened, in `serve`, `migrate`, `batch-worker` and cluster
 * mode. Before, SIGTERM was handled only once the gateway listened: as PID 1 in a container the process
 * ignored it until SIGKILL (and, not being PID 1 here, it died of the signal with nothing closed).
 * Order of events, not wall-clock bounds: the process exits while the lock is still held.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema } from '../support/backends.ts';
import { realBackendsAvailable, TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

/** migrate.ts's second key of the per-schema advisory lock. */
const LOCK_NAMESPACE = 730_2026;
const WAITING = 'waiting for another process to finish the database migrations';

interface Cli {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startCli(args: string[]): Cli {
  const child = spawn(process.execPath, ['src/main.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: 'pipe',
  });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return { child, output: () => output, exited };
}

async function until(condition: () => boolean, withinMs: number, what: string): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what}: not seen within ${withinMs} ms`);
    await delay(50);
  }
}

describe.runIf(await realBackendsAvailable())('a stop during start-up', () => {
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-startup-'));
  const schemas: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const schema of schemas) await dropSchema(schema);
    rmSync(folder, { recursive: true, force: true });
  });

  function configFor(databaseUrl: string, extra = ''): string {
    const path = join(folder, `${uniqueName('c')}.yaml`);
    writeFileSync(
      path,
      `model_list:\n  - model_name: demo\n    params: { provider: fake, model: demo }\ngeneral_settings:\n  master_key: sk-a-long-enough-master-key\n  database_url: ${JSON.stringify(databaseUrl)}\n${extra}`,
      { mode: 0o600 },
    );
    return path;
  }

  /**
   * Starts the command against a fresh schema whose migration lock another session holds, SIGTERMs it
   * once it says it waits, and returns how it ended and whether anything of it was left queued.
   */
  async function stopWhileWaitingForMigrations(args: string[], extra = '') {
    const schema = uniqueName('t');
    schemas.push(schema);
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    try {
      await holder.query(`create schema "${schema}"`);
      await holder.query(`select pg_advisory_lock(hashtext($1), ${LOCK_NAMESPACE})`, [schema]);
      const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const cli = startCli([...args, '--config', configFor(url, extra)]);
      children.push(cli.child);
      await until(() => cli.output().includes(WAITING), 60_000, `"${WAITING}"`);
      let released = false;
      cli.child.kill('SIGTERM');
      const exit = await Promise.race([cli.exited, delay(30_000).then(() => undefined)]);
      const underLock = !released && exit !== undefined;
      const queued = await holder.query(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted
           and objsubid = 2 and objid = ${LOCK_NAMESPACE}
           and classid::bigint = (hashtext($1)::bigint + 4294967296) % 4294967296`,
        [schema],
      );
      await holder.query(`select pg_advisory_unlock(hashtext($1), ${LOCK_NAMESPACE})`, [schema]);
      released = true;
      return { exit, underLock, queued: queued.rows[0].n as number, output: cli.output() };
    } finally {
      await holder.end();
    }
  }

  it('serve: exits 0 while another process holds the migration lock, leaving nothing queued for it', async () => {
    const run = await stopWhileWaitingForMigrations(['serve', '--port', '0']);
    expect(run.underLock, run.output).toBe(true);
    expect(run.exit).toEqual({ code: 0, signal: null });
    expect(run.output).toContain('stopping during start-up: closing what was opened');
    expect(run.output).toContain('"msg":"stopped during start-up"');
    expect(run.queued).toBe(0);
  });

  it('migrate: exits non-zero (the migrations were not applied), so a Job does not count it a success', async () => {
    const run = await stopWhileWaitingForMigrations(['migrate']);
    expect(run.underLock, run.output).toBe(true);
    expect(run.exit).toEqual({ code: 1, signal: null });
    expect(run.output).toContain('"msg":"stopped during start-up"');
    expect(run.output).not.toContain('failed to start');
    expect(run.queued).toBe(0);
  });

  it('batch-worker: exits 0 while waiting for the migrations', async () => {
    const run = await stopWhileWaitingForMigrations(['batch-worker'], '  embeddings_batch_enabled: true\n');
    expect(run.underLock, run.output).toBe(true);
    expect(run.exit).toEqual({ code: 0, signal: null });
    expect(run.output).toContain('"msg":"stopped during start-up"');
  });

  it('cluster mode (--workers 2): the primary exits 0 while waiting for the migrations', async () => {
    const run = await stopWhileWaitingForMigrations(
      ['serve', '--port', '0', '--workers', '2'],
      `  redis_url: ${JSON.stringify(TEST_REDIS_URL)}\n  redis_key_prefix: ${JSON.stringify(`${uniqueName('sb')}:`)}\n`,
    );
    expect(run.underLock, run.output).toBe(true);
    expect(run.exit).toEqual({ code: 0, signal: null });
    expect(run.output).toContain('"msg":"stopped during start-up"');
  });

  it('serve: exits 0 while its database accepts the connection but never answers', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket); // holds the connection, answers nothing (a stalled server)
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const cli = startCli([
        'serve',
        '--port',
        '0',
        '--config',
        configFor(`postgres://postgres@127.0.0.1:${port}/test`),
      ]);
      children.push(cli.child);
      await until(() => sockets.size > 0, 60_000, 'a connection to the silent database');
      cli.child.kill('SIGTERM');
      // The pool gives up connecting after 5 s, and would then fail the start: the stop comes first.
      const exit = await cli.exited;
      expect(exit, cli.output()).toEqual({ code: 0, signal: null });
      expect(cli.output()).toContain('"msg":"stopped during start-up"');
      expect(cli.output()).not.toContain('cannot use the database');
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});
