/**
 * Rows of `batch_files` (migration 0009); the bytes of the `database` store are chunks
 * (batch-file-chunk-repository.ts, migration 0011), those of the directory store files on disk. Ids are
 * `file-` + 24 base62 characters.
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { BatchFilesTable, DatabaseSchema } from '../tables.ts';
import {
  BatchFileChunkRepository,
  type ChunkReadScope,
  markRemoving,
} from './batch-file-chunk-repository.ts';
import { type BatchViewer, canSee, olderThan, visibleTo } from './batch-visibility.ts';

export type BatchFileRecord = Omit<BatchFilesTable, 'content'>;

export interface BatchFileListRequest {
  /** The page starts after this id in the list's order (OpenAI's cursor); the caller checks it exists. */
  after?: string | undefined;
  limit: number;
  purpose?: string | undefined;
  /** By created_at, then id: `desc` (newest first, the default) or `asc`. */
  order?: 'asc' | 'desc' | undefined;
}

const META = [
  'id',
  'owner_key_id',
  'owner_team_id',
  'purpose',
  'filename',
  'bytes',
  'line_count',
  'created_at',
  'storage',
  'deleted_at',
] as const;

/** The chunks of a file were removed while it was written (a sweep took it for a dead writer's). */
export class ChunksRemoved extends Error {
  constructor(id: string) {
    super(`the chunks of batch file ${id} were removed while it was being written`);
    this.name = 'ChunksRemoved';
  }
}

export class BatchFileRepository {
  readonly chunks: BatchFileChunkRepository;
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
    this.chunks = new BatchFileChunkRepository(db);
  }

  /** The row of a file whose bytes are already in place (the directory store). */
  async insert(file: BatchFileRecord): Promise<void> {
    await this.db
      .insertInto('batch_files')
      .values({ ...file, content: null })
      .execute();
  }

  /**
   * The row of a file whose chunks were written under a pending mark (chunks.begin), and the mark's
   * removal, in one transaction: the file becomes visible whole. Throws ChunksRemoved (inserting
   * nothing) when the mark is gone or turned into a removal.
   */
  async insertWritten(file: BatchFileRecord): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const ended = await trx
        .deleteFrom('batch_file_pending')
        .where('file_id', '=', file.id)
        .where('since', '>', 0)
        .executeTakeFirst();
      if (Number(ended.numDeletedRows) !== 1) throw new ChunksRemoved(file.id);
      await trx
        .insertInto('batch_files')
        .values({ ...file, content: null })
        .execute();
    });
  }

  /** The row (deleted ones included, so a caller can tell "gone" from "never was"). */
  async get(id: string): Promise<BatchFileRecord | undefined> {
    const row = await this.db.selectFrom('batch_files').select(META).where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The row when it exists, is not deleted and the viewer may see it. */
  async getVisible(id: string, viewer: BatchViewer): Promise<BatchFileRecord | undefined> {
    const row = await this.get(id);
    return row && row.deleted_at === null && canSee(viewer, row) ? row : undefined;
  }

  /**
   * The whole text of a file stored in its row (null when it has none, or is deleted): only files an
   * older replica wrote after migration 0011 copied the others into chunks.
   */
  async rowContent(id: string, scope: ChunkReadScope = this.db): Promise<string | null> {
    const row = await scope
      .selectFrom('batch_files')
      .select(['content'])
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row?.content ?? null;
  }

  /** One more than `limit` rows are read, so the caller knows whether more follow. */
  async list(
    viewer: BatchViewer,
    request: BatchFileListRequest,
  ): Promise<{ items: BatchFileRecord[]; hasMore: boolean }> {
    let query = this.db
      .selectFrom('batch_files')
      .select(META)
      .where('deleted_at', 'is', null)
      .where(visibleTo(viewer));
    if (request.purpose !== undefined) query = query.where('purpose', '=', request.purpose);
    const order = request.order ?? 'desc';
    if (request.after !== undefined) {
      const cursor = await this.get(request.after);
      if (cursor) query = query.where(order === 'desc' ? olderThan(cursor) : newerThan(cursor));
    }
    const rows = await query
      .orderBy('created_at', order)
      .orderBy('id', order)
      .limit(request.limit + 1)
      .execute();
    return { items: rows.slice(0, request.limit).map(toRecord), hasMore: rows.length > request.limit };
  }

  /**
   * Marks the file deleted (and clears a row's own text); for the `database` store its chunks are marked
   * for removal in the same transaction, so a crash before `chunks.remove` leaves them to the sweep.
   * False when there was no such live file.
   */
  async markDeleted(id: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('batch_files')
        .set({ deleted_at: now, content: null })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await markRemoving(trx, id);
      return true;
    });
  }
}

/** Rows after `cursor` in an oldest-first list (created_at, then id, both ascending). */
function newerThan(cursor: { created_at: number; id: string }) {
  return (eb: ExpressionBuilder<DatabaseSchema, 'batch_files'>) =>
    eb.or([
      eb('created_at', '>', cursor.created_at),
      eb.and([eb('created_at', '=', cursor.created_at), eb('id', '>', cursor.id)]),
    ]);
}

function toRecord(row: BatchFileRecord): BatchFileRecord {
  return {
    ...row,
    bytes: Number(row.bytes),
    line_count: Number(row.line_count),
    created_at: Number(row.created_at),
    deleted_at: row.deleted_at === null ? null : Number(row.deleted_at),
  };
}
