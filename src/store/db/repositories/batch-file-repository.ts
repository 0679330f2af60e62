/**
 * Rows of `batch_files` (migration 0009). The bytes live in `content` (database store) or in the
 * directory store; this repository only moves rows. Ids are `file-` + 24 base62 characters.
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { BatchFilesTable, DatabaseSchema } from '../tables.ts';
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

export class BatchFileRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  /** `content` is the whole text for the database store, null for the directory store. */
  async insert(file: BatchFileRecord, content: string | null): Promise<void> {
    await this.db
      .insertInto('batch_files')
      .values({ ...file, content })
      .execute();
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

  /** The stored text of a database-stored file (null for the directory store or a deleted file). */
  async content(id: string): Promise<string | null> {
    const row = await this.db
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

  /** Sets the line count of a file written as a stream (known only at its end). */
  async setLineCount(id: string, lineCount: number): Promise<void> {
    await this.db.updateTable('batch_files').set({ line_count: lineCount }).where('id', '=', id).execute();
  }

  /** Marks the file deleted and drops database-stored bytes; false when it was not there. */
  async markDeleted(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('batch_files')
      .set({ deleted_at: now, content: null })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
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
