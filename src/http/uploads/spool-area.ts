/**
 * Where this process spools uploads, and how much: one private root folder per process
 * (`switchboard-upload-<pid>-XXXXXX` under the OS temporary folder, 0700 from mkdtemp) holding one
 * folder per request, and a byte budget shared by every upload being spooled at once
 * (`general_settings.max_upload_spool_bytes`), so concurrent uploads cannot fill the disk whatever the
 * callers' rate limits (an upload is spooled before it is admitted: its model may follow the file).
 *
 * The root is removed when the app closes. A process that crashed leaves its root behind; at start the
 * roots of processes that are gone (no such pid, or our own pid from before this process started, as
 * after a container restart) are removed.
 */
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../observability/logger.ts';

/** Every spool root's name starts with this (under the OS temporary folder). */
export const SPOOL_PREFIX = 'switchboard-upload-';

/** A root's name: the prefix, the owning process id, mkdtemp's random suffix. */
const ROOT_NAME = /^switchboard-upload-(\d+)-[A-Za-z0-9]+$/;

export interface SpoolAreaOptions {
  /** Bytes of files being spooled at once, process-wide. */
  maxSpoolBytes: number;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** The folder roots go in; the OS temporary folder (read when the root is made) by default. */
  parent?: () => string;
}

export class SpoolArea {
  readonly maxSpoolBytes: number;
  private readonly logger: SpoolAreaOptions['logger'];
  private readonly parent: () => string;
  private root: Promise<string> | undefined;
  private rootPath: string | undefined;
  private spooling = 0;

  constructor(options: SpoolAreaOptions) {
    this.maxSpoolBytes = options.maxSpoolBytes;
    this.logger = options.logger;
    this.parent = options.parent ?? tmpdir;
  }

  /** Bytes reserved by uploads being spooled now. */
  get spoolingBytes(): number {
    return this.spooling;
  }

  /** Reserves `bytes` of the budget; false (nothing reserved) when that would pass it. */
  take(bytes: number): boolean {
    if (this.spooling + bytes > this.maxSpoolBytes) return false;
    this.spooling += bytes;
    return true;
  }

  /** Returns reserved bytes (the spool was deleted, or reserved more than it wrote). */
  give(bytes: number): void {
    this.spooling = Math.max(0, this.spooling - bytes);
  }

  /** A new private folder for one request's file. A root deleted under us (a tmp cleaner) is made again. */
  async requestFolder(): Promise<string> {
    const root = await this.rootFolder();
    try {
      return await mkdtemp(join(root, 'request-'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (this.rootPath === root) this.root = this.rootPath = undefined;
      return mkdtemp(join(await this.rootFolder(), 'request-'));
    }
  }

  /** Removes this process's root (at app close; requests have ended by then). */
  async close(): Promise<void> {
    await this.root?.catch(() => undefined);
    const root = this.rootPath;
    this.root = this.rootPath = undefined;
    if (root !== undefined) await removeQuietly(root, this.logger);
  }

  /** Removes the roots left by processes that are gone; returns their names. */
  async sweep(): Promise<string[]> {
    const parent = this.parent();
    let names: string[];
    try {
      names = await readdir(parent);
    } catch (error) {
      this.logger.warn({ err: error }, 'upload spool sweep could not list the temporary folder');
      return [];
    }
    const removed: string[] = [];
    for (const name of names) {
      const match = ROOT_NAME.exec(name);
      if (!match) continue;
      const path = join(parent, name);
      const stats = await lstat(path).catch(() => undefined);
      if (!stats?.isDirectory() || !isLeftOver(Number(match[1]), stats.mtimeMs)) continue;
      if (await removeQuietly(path, this.logger)) removed.push(name);
    }
    if (removed.length > 0)
      this.logger.warn({ removed }, 'removed upload spool folders left by processes that ended');
    return removed;
  }

  private rootFolder(): Promise<string> {
    if (this.root === undefined) {
      const made = mkdtemp(join(this.parent(), `${SPOOL_PREFIX}${process.pid}-`));
      this.root = made;
      made.then(
        (path) => {
          if (this.root === made) this.rootPath = path;
        },
        // A failure (a full or read-only disk) is not remembered: the next upload tries again.
        () => {
          if (this.root === made) this.root = undefined;
        },
      );
    }
    return this.root;
  }
}

/** A root whose process is gone: no process has its pid, or it is ours but older than this process. */
function isLeftOver(pid: number, modifiedMs: number): boolean {
  if (pid === process.pid) return modifiedMs < performance.timeOrigin;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists (another user's); only ESRCH says it is gone.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Deletes a folder; a failure is logged, never thrown (it must not fail a request or crash the process). */
export async function removeQuietly(path: string, logger: Pick<Logger, 'error'>): Promise<boolean> {
  try {
    await rm(path, { recursive: true, force: true });
    return true;
  } catch (error) {
    logger.error({ err: error }, 'an upload spool folder could not be deleted');
    return false;
  }
}
