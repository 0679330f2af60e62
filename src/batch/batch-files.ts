/**
 * Batch files (docs/batches.md): uploaded inputs, validated line by line before anything is stored, and
 * the output and error files the batch worker writes. Bytes live in the row (`database` store) or in the
 * directory store; rows remember which, so reads follow the row. Visibility: the key's team, else the
 * key alone; the master key sees every file and owns its uploads as `master`.
 */
import { constants } from 'node:buffer';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Caller } from '../canonical/caller.ts';
import type { GeneralSettings } from '../config/config.ts';
import type { Clock } from '../lib/clock.ts';
import { newBase62Id } from '../lib/random.ts';
import { BatchFileDirectory } from '../store/batch-file-directory.ts';
import {
  type BatchFileListRequest,
  type BatchFileRecord,
  BatchFileRepository,
} from '../store/db/repositories/batch-file-repository.ts';
import type { BatchViewer } from '../store/db/repositories/batch-visibility.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import {
  type BatchInputLine,
  type LineLimits,
  MAX_BATCH_LINES,
  readBatchLines,
} from './batch-input-lines.ts';

export interface BatchFileOwner {
  keyId: string;
  teamId: string | null;
}

/** The owner id of the master key's files and batches (it has no key row). */
export const MASTER_OWNER = 'master';

export function ownerOf(caller: Caller): BatchFileOwner {
  return caller.kind === 'master' || caller.keyId === null
    ? { keyId: MASTER_OWNER, teamId: null }
    : { keyId: caller.keyId, teamId: caller.teamId };
}

export function viewerOf(caller: Caller): BatchViewer {
  return caller.kind === 'master' ? { all: true } : { keyId: caller.keyId ?? '', teamId: caller.teamId };
}

/** An uploaded file, readable again as often as needed (the spooled upload). */
export interface UploadSource {
  filename: string;
  bytes: number;
  open(): AsyncIterable<Uint8Array>;
}

export interface BatchFilesOptions {
  db: Kysely<DatabaseSchema>;
  /** `database`, or an absolute directory (general_settings.batch_file_store). */
  store: string;
  clock: Clock;
  limits: LineLimits;
  /**
   * Largest output or error file the `database` store builds (general_settings.batch_file_max_bytes): its
   * bytes are gathered in memory for the row, so a larger one is refused (BatchOutputTooLarge) instead
   * of exhausting memory or V8's string limit. The directory store streams and has no such bound.
   */
  maxDatabaseOutputBytes?: number;
}

/** A worker's output file would exceed what the `database` store builds in memory. */
export class BatchOutputTooLarge extends Error {
  readonly limit: number;

  constructor(limit: number) {
    super(
      `The batch's output is larger than ${limit} bytes (general_settings.batch_file_max_bytes), more than the 'database' file store builds in memory; set general_settings.batch_file_store to a directory to store larger outputs.`,
    );
    this.name = 'BatchOutputTooLarge';
    this.limit = limit;
  }
}

export class BatchFiles {
  readonly repository: BatchFileRepository;
  readonly limits: LineLimits;
  private readonly directory: BatchFileDirectory | undefined;
  private readonly clock: Clock;
  private readonly maxDatabaseOutputBytes: number;

  constructor(options: BatchFilesOptions) {
    this.maxDatabaseOutputBytes = options.maxDatabaseOutputBytes ?? 200 * 1024 * 1024;
    this.repository = new BatchFileRepository(options.db);
    this.directory = options.store === 'database' ? undefined : new BatchFileDirectory(options.store);
    this.clock = options.clock;
    this.limits = options.limits;
  }

  /** Validates every line (400 naming the first bad one), then stores the file; nothing is stored on refusal. */
  async createInput(owner: BatchFileOwner, upload: UploadSource): Promise<BatchFileRecord> {
    let lines = 0;
    for await (const _line of readBatchLines(upload.open(), this.limits)) lines++;
    const id = newBase62Id('file-');
    return this.store(owner, id, 'batch', upload.filename, lines, upload.open());
  }

  /**
   * Writes a worker's output or error file (`purpose: batch_output`) from JSON lines without newlines;
   * `id` lets the finalizer name it after the batch and its lease (to find it again after a crash).
   */
  async writeOutput(
    owner: BatchFileOwner,
    filename: string,
    lines: AsyncIterable<string>,
    id = newBase62Id('file-'),
  ): Promise<BatchFileRecord> {
    let count = 0;
    async function* withNewlines(): AsyncGenerator<Uint8Array> {
      for await (const line of lines) {
        count++;
        yield Buffer.from(`${line}\n`);
      }
    }
    const record = await this.store(owner, id, 'batch_output', filename, 0, withNewlines());
    await this.repository.setLineCount(id, count);
    return { ...record, line_count: count };
  }

  /** The file when it exists, is not deleted, and the viewer may see it. */
  get(id: string, viewer: BatchViewer): Promise<BatchFileRecord | undefined> {
    return this.repository.getVisible(id, viewer);
  }

  list(viewer: BatchViewer, request: BatchFileListRequest) {
    return this.repository.list(viewer, request);
  }

  /** The file's bytes as a stream (the directory store streams from disk). */
  async content(file: BatchFileRecord): Promise<Readable> {
    if (file.storage === 'directory') {
      if (!this.directory)
        throw new Error(`batch file ${file.id} is in a directory store, but batch_file_store is 'database'`);
      return this.directory.open(file.id);
    }
    const text = (await this.repository.content(file.id)) ?? '';
    return Readable.from([Buffer.from(text)]);
  }

  /** The requests of a stored input file, parsed again (the batch side turns them into items). */
  async *inputLines(file: BatchFileRecord): AsyncGenerator<BatchInputLine> {
    yield* readBatchLines(await this.content(file), this.limits);
  }

  /** Marks the file deleted and removes its bytes; false when there was no such live file. */
  async delete(id: string): Promise<boolean> {
    const file = await this.repository.get(id);
    if (!file || file.deleted_at !== null) return false;
    const deleted = await this.repository.markDeleted(id, this.seconds());
    if (deleted && file.storage === 'directory') await this.directory?.delete(id);
    return deleted;
  }

  /** Removes the bytes a worker may have left for `id` (whole or half-written) when it has no row. */
  async discardBytes(id: string): Promise<void> {
    await this.directory?.delete(id);
  }

  private async store(
    owner: BatchFileOwner,
    id: string,
    purpose: 'batch' | 'batch_output',
    filename: string,
    lineCount: number,
    chunks: AsyncIterable<Uint8Array>,
  ): Promise<BatchFileRecord> {
    const base = {
      id,
      owner_key_id: owner.keyId,
      owner_team_id: owner.teamId,
      purpose,
      filename,
      line_count: lineCount,
      created_at: this.seconds(),
      deleted_at: null,
    };
    if (this.directory) {
      const bytes = await this.directory.put(id, chunks);
      const record: BatchFileRecord = { ...base, bytes, storage: 'directory' };
      try {
        await this.repository.insert(record, null);
      } catch (error) {
        await this.directory.delete(id).catch(() => {});
        throw error;
      }
      return record;
    }
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of chunks) {
      size += chunk.byteLength;
      // Uploads are bounded before they get here; a worker's output is bounded here, while it is built.
      if (purpose === 'batch_output' && size > this.maxDatabaseOutputBytes)
        throw new BatchOutputTooLarge(this.maxDatabaseOutputBytes);
      parts.push(Buffer.from(chunk));
    }
    const content = Buffer.concat(parts);
    const record: BatchFileRecord = { ...base, bytes: content.length, storage: 'database' };
    await this.repository.insert(record, content.toString('utf8'));
    return record;
  }

  private seconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }
}

/** The gateway's batch files, or undefined while batches are disabled. */
export function createBatchFiles(
  general: Pick<
    GeneralSettings,
    'embeddings_batch_enabled' | 'batch_file_store' | 'batch_file_max_bytes' | 'max_request_body_bytes'
  >,
  db: Kysely<DatabaseSchema>,
  clock: Clock,
): BatchFiles | undefined {
  if (!general.embeddings_batch_enabled) return undefined;
  return new BatchFiles({
    db,
    store: general.batch_file_store,
    clock,
    // The row's text is one JS string: never more than V8 can make, whatever the setting says.
    maxDatabaseOutputBytes: Math.min(general.batch_file_max_bytes, constants.MAX_STRING_LENGTH),
    limits: {
      maxLines: MAX_BATCH_LINES,
      maxLineBytes: general.max_request_body_bytes,
      lineSetting: 'general_settings.max_request_body_bytes',
    },
  });
}
