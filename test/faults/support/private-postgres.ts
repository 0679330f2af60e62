/**
 * A private PostgreSQL cluster for fault scenarios that kill the database: created with `initdb` in a
 * temporary directory, run on a free loopback port (no Unix socket), killed with SIGKILL (the postmaster
 * and every backend, as a crash of the host process would) and restarted on the same port and data
 * directory, so the gateway reconnects to the same address and finds its data again. The shared server
 * at 5432 is never touched.
 *
 * PostgreSQL refuses to run as root. When the tests run as root (this machine and its CI), initdb and
 * postgres run as the `postgres` system user through spawn's uid/gid (no su/runuser wrapper between
 * us and the postmaster, so its PID is ours to kill); otherwise they run as the current user.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { acceptsConnections, freePort } from '../../support/tcp-ports.ts';
import { REQUIRE_REAL_BACKENDS } from '../../support/test-env.ts';

interface RunAs {
  uid: number;
  gid: number;
}

export class PrivatePostgres {
  readonly port: number;
  private readonly dir: string;
  private readonly bin: string;
  private readonly runAs: RunAs | undefined;
  private child: ChildProcess | undefined;
  private log = '';

  private constructor(port: number, dir: string, bin: string, runAs: RunAs | undefined) {
    this.port = port;
    this.dir = dir;
    this.bin = bin;
    this.runAs = runAs;
  }

  /**
   * True when initdb and postgres can be found (the suite skips the PostgreSQL scenarios otherwise).
   * Under REQUIRE_REAL_BACKENDS=1 (CI) a missing initdb throws instead: a skipped scenario would pass.
   */
  static available(): boolean {
    if (postgresBinDir() !== undefined) return true;
    if (REQUIRE_REAL_BACKENDS)
      throw new Error(
        'REQUIRE_REAL_BACKENDS=1 but initdb/postgres are not found (PATH, /usr/lib/postgresql/<version>/bin): ' +
          'install the PostgreSQL server package (Debian/Ubuntu: apt-get install postgresql)',
      );
    return false;
  }

  static async start(): Promise<PrivatePostgres> {
    const bin = postgresBinDir();
    if (!bin) throw new Error('initdb/postgres not found (PATH, /usr/lib/postgresql/*/bin)');
    const runAs = process.getuid?.() === 0 ? postgresUser() : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-pg-'));
    if (runAs) chownSync(dir, runAs.uid, runAs.gid);
    const server = new PrivatePostgres(await freePort(), dir, bin, runAs);
    try {
      execFileSync(
        join(bin, 'initdb'),
        ['-D', server.dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--locale=C'],
        { stdio: 'pipe', ...(runAs ?? {}) },
      );
      await server.restart();
    } catch (error) {
      await server.remove();
      throw error;
    }
    return server;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** The `postgres` database as the `postgres` superuser (trust authentication on loopback). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** What the server printed since it was created (for failure messages). */
  output(): string {
    return this.log;
  }

  /** Starts (again) on the same port and data directory and waits until it accepts queries. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('the private PostgreSQL is already running');
    const child = spawn(
      join(this.bin, 'postgres'),
      [
        '-D',
        this.dataDir,
        '-p',
        String(this.port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        // A killed process loses nothing the OS has (fsync=off only matters if the host dies), so
        // commits stay synchronous: an acknowledged commit must survive the kill, as in production.
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=100',
      ],
      // Its own process group: kill() takes the postmaster and its backends down together.
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...(this.runAs ?? {}) },
    );
    child.stdout!.on('data', (chunk) => {
      this.log += chunk;
    });
    child.stderr!.on('data', (chunk) => {
      this.log += chunk;
    });
    this.child = child;
    // A detached postmaster would outlive a test process that dies before remove(): take it along.
    const reap = () => groupKill(child.pid!);
    process.once('exit', reap);
    child.once('exit', () => process.off('exit', reap));
    const deadline = performance.now() + 15_000;
    while (performance.now() < deadline) {
      if (child.exitCode !== null) {
        this.child = undefined;
        throw new Error(`postgres exited with ${child.exitCode}:\n${this.log}`);
      }
      if ((await acceptsConnections(this.port)) && (await this.answers())) return;
      await delay(50);
    }
    throw new Error(`the private PostgreSQL did not start within 15 s:\n${this.log}`);
  }

  /** SIGKILL to the postmaster and every backend at once, then waits until the port is closed. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      await exited;
    }
    // Backends of the group may outlive the postmaster by a moment; a restart needs them gone.
    const deadline = performance.now() + 5_000;
    while (groupAlive(child.pid!) || (await acceptsConnections(this.port))) {
      if (performance.now() > deadline) throw new Error('the private PostgreSQL did not die within 5 s');
      await delay(20);
    }
  }

  /**
   * SIGSTOP to the postmaster and every backend: the server stalls, its connections stay open. Each
   * backend is a session of its own (PostgreSQL calls setsid()), so they are found by parent, not group.
   */
  pause(): void {
    if (!this.child) return;
    for (const pid of [this.child.pid!, ...childrenOf(this.child.pid!)]) signal(pid, 'SIGSTOP');
  }

  /** SIGCONT after pause(). */
  resume(): void {
    if (!this.child) return;
    for (const pid of [this.child.pid!, ...childrenOf(this.child.pid!)]) signal(pid, 'SIGCONT');
  }

  /**
   * A fast shutdown (SIGINT to the postmaster, as `pg_ctl stop -m fast`): every session is ended and
   * its open transaction rolled back; waits until the port is closed. restart() brings it back.
   */
  async stopFast(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    await exited;
    const deadline = performance.now() + 10_000;
    while (groupAlive(child.pid!) || (await acceptsConnections(this.port))) {
      if (performance.now() > deadline) throw new Error('the private PostgreSQL did not stop within 10 s');
      await delay(20);
    }
  }

  /** Kills the server and deletes its directory. */
  async remove(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async answers(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/** Processes whose parent is `parent` (Linux /proc). */
function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The fields after the command name (which may hold spaces) start with the state, then the ppid.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone meanwhile
  }
}

function groupKill(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function postgresUser(): RunAs {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

/** The directory of initdb and postgres: initdb on PATH (resolving Debian's symlinks), else the newest
 * /usr/lib/postgresql/<version>/bin. */
function postgresBinDir(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(':')) {
    const initdb = join(folder, 'initdb');
    if (!existsSync(initdb)) continue;
    const bin = dirname(realpathSync(initdb));
    if (existsSync(join(bin, 'postgres'))) return bin;
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => ['initdb', 'postgres'].every((tool) => existsSync(join(root, name, 'bin', tool))))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}
