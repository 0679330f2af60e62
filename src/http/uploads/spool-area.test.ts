/**
 * The process's spool area: the byte budget shared by uploads being spooled (never past its bound,
 * bytes given back), one root per process removed at close, a root deleted under us made again, and
 * the start-up sweep that removes the roots of processes that are gone and keeps those of live ones.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SPOOL_PREFIX, SpoolArea } from './spool-area.ts';

const logged: unknown[] = [];
const logger = {
  warn: (...args: unknown[]) => logged.push(args),
  error: (...args: unknown[]) => logged.push(args),
};

/** A pid no process has now (searched downwards from the kernel's default pid_max). */
function deadPid(): number {
  for (let pid = 4_194_000; pid > 1000; pid -= 97) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
  throw new Error('no free pid found');
}

describe('SpoolArea', () => {
  let parent: string;
  let area: SpoolArea;

  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), 'sb-spool-area-'));
    area = new SpoolArea({ maxSpoolBytes: 1000, logger, parent: () => parent });
    logged.length = 0;
  });
  afterEach(async () => {
    await area.close();
    rmSync(parent, { recursive: true, force: true });
  });

  it('never lets the bytes being spooled pass max_upload_spool_bytes, and takes them back when given', () => {
    expect(area.take(600)).toBe(true);
    expect(area.take(401)).toBe(false);
    expect(area.spoolingBytes).toBe(600);
    expect(area.take(400)).toBe(true);
    area.give(600);
    expect(area.take(600)).toBe(true);
    expect(area.spoolingBytes).toBe(1000);
  });

  it("keeps every request's folder in one root of this process, removed at close", async () => {
    const first = await area.requestFolder();
    const second = await area.requestFolder();
    const roots = readdirSync(parent);
    expect(roots).toHaveLength(1);
    expect(roots[0]).toMatch(new RegExp(`^${SPOOL_PREFIX}${process.pid}-`));
    expect(readdirSync(join(parent, roots[0]!)).sort()).toEqual(
      [first, second].map((path) => path.split('/').pop()).sort(),
    );
    await area.close();
    expect(readdirSync(parent)).toEqual([]);
  });

  it('makes its root again when a temporary-folder cleaner deleted it', async () => {
    const first = await area.requestFolder();
    rmSync(join(first, '..'), { recursive: true });
    const again = await area.requestFolder();
    expect(existsSync(again)).toBe(true);
  });

  it('sweeps at start the roots of processes that are gone, and keeps the roots of live processes', async () => {
    const gone = `${SPOOL_PREFIX}${deadPid()}-abc123`;
    mkdirSync(join(parent, gone, 'request-x'), { recursive: true });
    writeFileSync(join(parent, gone, 'request-x', 'upload'), 'left by a crash');
    // Our own pid, but from before this process started (a container restarted with the same /tmp).
    const earlierSelf = `${SPOOL_PREFIX}${process.pid}-old000`;
    mkdirSync(join(parent, earlierSelf));
    const before = new Date(performance.timeOrigin - 60_000);
    utimesSync(join(parent, earlierSelf), before, before);
    const live = `${SPOOL_PREFIX}${process.ppid}-live00`;
    mkdirSync(join(parent, live));
    const current = await area.requestFolder();
    const unrelated = 'switchboard-upload-notapid';
    mkdirSync(join(parent, unrelated));

    expect((await area.sweep()).sort()).toEqual([earlierSelf, gone].sort());
    expect(readdirSync(parent).sort()).toEqual([live, current.split('/').at(-2)!, unrelated].sort());
    expect(existsSync(current)).toBe(true);
  });
});
