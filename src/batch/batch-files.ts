/**
 * Batch files (docs/batches.md): uploaded inputs, validated line by line before anything is stored, and
 * the output and error files the batch worker writes. Bytes live in chunks in the database (`database`
 * store, database-file-bytes.ts) or in the directory store; rows remember which, so reads follow the
 * row. Both stores stream: no file is ever held whole. Visibility: the key's team, else the key alone;
 * the master key sees every file and owns its uploads as `master`.
 */
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Caller } from '../canonical/caller.ts';
import type { GeneralSettings } from '../config/config.ts';
import type { Clock } from '../lib/clock.ts';
import { newBase62Id } from '../lib/random.ts';
import { BatchFileDirectory } from '../store/batch-file-directory.ts';
import type { ChunkReadScope } from '../store/db/repositories/batch-file-chunk-repository.ts';
import {
  type BatchFileListRequest,
  type BatchFileRecord,
  BatchFileRepository,
} from '../store/db/repositories/batch-file-repository.ts';
import type { BatchViewer } from '../store/db/repositories/batch-visibility.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import { type LineLimits, MAX_BATCH_LINES, readBatchLines } from './batch-input-lines.ts';
import { type ChunkSizes, DatabaseFileBytes, DEFAULT_CHUNK_SIZES } from './database-file-bytes.ts';
import { fixedChunks } from './fixed-chunks.ts';

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
  /** Chunking of the `database` store (tests make chunks small to cross their boundaries). */
  chunks?: Partial<ChunkSizes>;
}

/** Bytes per write of the directory store (a read stream's default piece). */
const DIRECTORY_WRITE_BYTES = 64 * 1024;

export class BatchFiles {
  readonly repository: BatchFileRepository;
  readonly limits: LineLimits;
  private readonly directory: BatchFileDirectory | undefined;
  private readonly database: DatabaseFileBytes;
  private readonly clock: Clock;

  constructor(options: BatchFilesOptions) {
    this.repository = new BatchFileRepository(options.db);
    this.directory = options.store === 'database' ? undefined : new BatchFileDirectory(options.store);
    this.database = new DatabaseFileBytes(this.repository, options.clock, {
      ...DEFAULT_CHUNK_SIZES,
      ...options.chunks,
    });
    this.clock = options.clock;
    this.limits = options.limits;
  }

  /** Validates every line (400 naming the first bad one), then stores the file; nothing is stored on refusal. */
  async createInput(owner: BatchFileOwner, upload: UploadSource): Promise<BatchFileRecord> {
    let lines = 0;
    for await (const _line of readBatchLines(upload.open(), this.limits)) lines++;
    const id = newBase62Id('file-');
    return this.store(owner, id, 'batch', upload.filename, () => lines, upload.open());
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
    // The count is final once the lines are written, before the row is inserted.
    return this.store(owner, id, 'batch_output', filename, () => count, withNewlines());
  }

  /** The file when it exists, is not deleted, and the viewer may see it. */
  get(id: string, viewer: BatchViewer): Promise<BatchFileRecord | undefined> {
    return this.repository.getVisible(id, viewer);
  }

  list(viewer: BatchViewer, request: BatchFileListRequest) {
    return this.repository.list(viewer, request);
  }

  /**
   * The file's bytes as a stream, read as the consumer takes them. `scope`: the transaction the caller
   * holds while it reads (SQLite has one connection: a read outside it would wait for it forever).
   */
  content(file: BatchFileRecord, scope?: ChunkReadScope): Readable {
    if (file.storage === 'directory') {
      if (!this.directory)
        throw new Error(`batch file ${file.id} is in a directory store, but batch_file_store is 'database'`);
      return this.directory.open(file.id);
    }
    return this.database.read(file, scope);
  }

  /** Marks the file deleted and removes its bytes; false when there was no such live file. */
  async delete(id: string): Promise<boolean> {
    const file = await this.repository.get(id);
    if (!file || file.deleted_at !== null) return false;
    const deleted = await this.repository.markDeleted(id, this.seconds());
    if (!deleted) return false;
    if (file.storage === 'directory') await this.directory?.delete(id);
    // Also for a directory file: it clears the removal mark markDeleted set.
    await this.database.remove(id);
    return true;
  }

  /** Removes the bytes a worker may have left for `id` (whole or half-written) when it has no row. */
  async discardBytes(id: string): Promise<void> {
    await this.directory?.delete(id);
    await this.database.remove(id);
  }

  private async store(
    owner: BatchFileOwner,
    id: string,
    purpose: 'batch' | 'batch_output',
    filename: string,
    lineCount: () => number,
    chunks: AsyncIterable<Uint8Array>,
  ): Promise<BatchFileRecord> {
    const createdAt = this.seconds();
    const record = (bytes: number, storage: 'database' | 'directory'): BatchFileRecord => ({
      id,
      owner_key_id: owner.keyId,
      owner_team_id: owner.teamId,
      purpose,
      filename,
      bytes,
      line_count: lineCount(),
      created_at: createdAt,
      storage,
      deleted_at: null,
    });
    if (!this.directory) return this.database.write(id, chunks, (bytes) => record(bytes, 'database'));
    // Pieces of a disk write's size, not a write per line of a worker's output.
    const stored = record(
      await this.directory.put(id, fixedChunks(chunks, DIRECTORY_WRITE_BYTES)),
      'directory',
    );
    try {
      await this.repository.insert(stored);
    } catch (error) {
      await this.directory.delete(id).catch(() => {});
      throw error;
    }
    return stored;
  }

  private seconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }
}

/** The gateway's batch files, or undefined while batches are disabled. */
export function createBatchFiles(
  general: Pick<GeneralSettings, 'embeddings_batch_enabled' | 'batch_file_store' | 'max_request_body_bytes'>,
  db: Kysely<DatabaseSchema>,
  clock: Clock,
): BatchFiles | undefined {
  if (!general.embeddings_batch_enabled) return undefined;
  return new BatchFiles({
    db,
    store: general.batch_file_store,
    clock,
    limits: {
      maxLines: MAX_BATCH_LINES,
      maxLineBytes: general.max_request_body_bytes,
      lineSetting: 'general_settings.max_request_body_bytes',
    },
  });
}
