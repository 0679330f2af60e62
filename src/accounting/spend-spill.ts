/**
 * The spend spill folder (issue 31): spend records the telemetry database did not take in time (at
 * shutdown, or past the in-memory retry buffer) are written to local files, 0600 in a 0700 folder, and
 * the next start (or this process once the database answers again) writes them to spend_logs. Writes
 * are idempotent (spend_id), so a record spilled while its batch was still committing costs nothing.
 *
 * Each file holds one spill, written under a temporary name and renamed, so a reader never sees half of
 * it. Its name carries the id of the telemetry database it belongs to: a folder shared by replicas, or a
 * data folder pointed at another database, never replays records into the wrong one. A file is claimed
 * by renaming it, so two processes sharing the folder never replay the same file at once.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { SpendRecord } from '../canonical/spend-record.ts';
import { ensurePrivateFolder } from '../lib/private-files.ts';

/** A claim older than this belongs to a process that died while replaying: it is taken over. */
const STALE_CLAIM_MS = 10 * 60_000;

export interface SpillClaim {
  file: string;
  records: SpendRecord[];
  /** Lines that were not a spend record (a damaged file); they are dropped with the file. */
  unreadable: number;
  /** The records are written: the file goes. */
  done(): void;
  /** The records could not be written: the file waits for the next try. */
  giveBack(): void;
}

export class SpendSpill {
  readonly dir: string;
  private readonly prefix: string;

  /** `databaseId`: the telemetry database's own id (SpendRepository.databaseId). */
  constructor(dir: string, databaseId: string) {
    this.dir = dir;
    this.prefix = `spend-${databaseId.replace(/[^a-zA-Z0-9_-]/g, '')}-`;
  }

  /** Writes the records to a new file and returns its path; throws when the folder is not writable. */
  write(records: readonly SpendRecord[]): string {
    ensurePrivateFolder(this.dir);
    const name = `${this.prefix}${Date.now()}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`;
    const temporary = join(this.dir, `.${name}.tmp`);
    const descriptor = openSync(temporary, 'wx', 0o600);
    try {
      writeSync(descriptor, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    const file = join(this.dir, name);
    renameSync(temporary, file);
    return file;
  }

  /** Files of this database waiting to be written (stale claims of dead processes included). */
  waiting(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return []; // no folder: nothing was ever spilled
    }
    const now = Date.now();
    const files: string[] = [];
    for (const name of names) {
      if (!name.startsWith(this.prefix)) continue;
      if (name.endsWith('.jsonl')) files.push(name);
      else if (/\.jsonl\.claimed-/.test(name) && this.staleClaim(name, now))
        files.push(name.replace(/\.claimed-.*$/, ''));
    }
    return files.sort();
  }

  /** Claims the oldest waiting file; undefined when there is none (or another process took it first). */
  claim(): SpillClaim | undefined {
    for (const name of this.waiting()) {
      const claimed = join(this.dir, `${name}.claimed-${process.pid}-${randomBytes(4).toString('hex')}`);
      if (!this.take(name, claimed)) continue;
      const lines = readFileSync(claimed, 'utf8').split('\n').filter(Boolean);
      const records = lines.flatMap(parseLine);
      const original = join(this.dir, name);
      return {
        file: original,
        records,
        unreadable: lines.length - records.length,
        done: () => unlinkSync(claimed),
        giveBack: () => renameSync(claimed, original),
      };
    }
    return undefined;
  }

  /** Renames the file (or a stale claim of it) to our claim; false when another process was first. */
  private take(name: string, claimed: string): boolean {
    const candidates = [name, ...this.staleClaimsOf(name)];
    for (const candidate of candidates) {
      try {
        renameSync(join(this.dir, candidate), claimed);
        // A claim's age counts from now, not from when the spill was written.
        utimesSync(claimed, new Date(), new Date());
        return true;
      } catch {
        // gone: another process claimed it
      }
    }
    return false;
  }

  private staleClaimsOf(name: string): string[] {
    const now = Date.now();
    try {
      return readdirSync(this.dir).filter(
        (entry) => entry.startsWith(`${name}.claimed-`) && this.staleClaim(entry, now),
      );
    } catch {
      return [];
    }
  }

  private staleClaim(name: string, now: number): boolean {
    try {
      return now - statSync(join(this.dir, name)).mtimeMs > STALE_CLAIM_MS;
    } catch {
      return false;
    }
  }
}

function parseLine(line: string): SpendRecord[] {
  try {
    const record = JSON.parse(line) as SpendRecord;
    return typeof record?.spendId === 'string' && typeof record.requestId === 'string' ? [record] : [];
  } catch {
    return [];
  }
}
