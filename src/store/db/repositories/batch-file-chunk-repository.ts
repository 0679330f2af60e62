/**
 * The chunks of `database`-stored batch files (text, each cut between characters) and the pending marks
 * beside them (migration 0011). A file's chunks are written under a pending mark (the file's row does
 * not exist yet, so nothing reads them), and the row's insert removes the mark in the same transaction.
 * A removal marks the file pending again (since 0), then deletes its chunks a few at a time. Marks older
 * than a bound are the leftovers of a process that died mid-write or mid-removal: `sweep` removes their
 * chunks.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../tables.ts';

/** Chunks deleted per statement: a removal never holds SQLite's one connection (and thread) for long. */
const REMOVE_BATCH = 16;
/** Leftover marks removed per sweep. */
const SWEEP_BATCH = 16;

/** Where a read runs: the database, or a transaction that holds its only connection (SQLite). */
export type ChunkReadScope = Kysely<DatabaseSchema>;

export interface FileChunk {
  seq: number;
  /** The chunk's text (UTF-8 on the wire: a writer takes it as it is, without a byte copy). */
  text: string;
}

export class BatchFileChunkRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  /** Marks `fileId` as being written since `nowMs` (before its first chunk). */
  async begin(fileId: string, nowMs: number): Promise<void> {
    await this.db.insertInto('batch_file_pending').values({ file_id: fileId, since: nowMs }).execute();
  }

  /** Inserts `chunks` (text) as the file's chunks `firstSeq`, `firstSeq + 1` … in one statement. */
  async append(fileId: string, firstSeq: number, chunks: readonly string[]): Promise<void> {
    if (chunks.length === 0) return;
    await this.db
      .insertInto('batch_file_chunks')
      .values(chunks.map((data, index) => ({ file_id: fileId, seq: firstSeq + index, data })))
      .execute();
  }

  /** At most `limit` chunks of the file from `fromSeq` on, in order. */
  async read(
    fileId: string,
    fromSeq: number,
    limit: number,
    scope: ChunkReadScope = this.db,
  ): Promise<FileChunk[]> {
    const rows = await scope
      .selectFrom('batch_file_chunks')
      .select(['seq', 'data'])
      .where('file_id', '=', fileId)
      .where('seq', '>=', fromSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ seq: Number(row.seq), text: row.data }));
  }

  /** Removes the file's chunks, under a pending mark until the last is gone (a crash leaves it to `sweep`). */
  async remove(fileId: string): Promise<void> {
    await markRemoving(this.db, fileId);
    await this.removeMarked(fileId);
  }

  /**
   * Removes the chunks of files marked pending before `beforeMs` (a writer or remover that died). Each
   * mark is claimed first (turned into a removal while still stale): a writer that published its file
   * meanwhile took the mark away, and its chunks stay.
   */
  async sweep(beforeMs: number): Promise<string[]> {
    const stale = await this.db
      .selectFrom('batch_file_pending')
      .select('file_id')
      .where('since', '<', beforeMs)
      .limit(SWEEP_BATCH)
      .execute();
    const removed: string[] = [];
    for (const { file_id: fileId } of stale) {
      const claimed = await this.db
        .updateTable('batch_file_pending')
        .set({ since: 0 })
        .where('file_id', '=', fileId)
        .where('since', '<', beforeMs)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) continue;
      await this.removeMarked(fileId);
      removed.push(fileId);
    }
    return removed;
  }

  /** Deletes the chunks of a file marked for removal a few at a time, then its mark. */
  private async removeMarked(fileId: string): Promise<void> {
    for (;;) {
      const doomed = await this.db
        .selectFrom('batch_file_chunks')
        .select('seq')
        .where('file_id', '=', fileId)
        .orderBy('seq')
        .limit(REMOVE_BATCH)
        .execute();
      if (doomed.length === 0) break;
      await this.db
        .deleteFrom('batch_file_chunks')
        .where('file_id', '=', fileId)
        .where(
          'seq',
          'in',
          doomed.map((row) => row.seq),
        )
        .execute();
      // SQLite runs on this thread: let waiting requests in between two statements.
      await yieldToLoop();
    }
    await this.db.deleteFrom('batch_file_pending').where('file_id', '=', fileId).execute();
  }
}

/** Marks the file pending since 0 (a removal: stale at once), whether or not a write had marked it. */
export async function markRemoving(db: Kysely<DatabaseSchema>, fileId: string): Promise<void> {
  await db
    .insertInto('batch_file_pending')
    .values({ file_id: fileId, since: 0 })
    .onConflict((conflict) => conflict.column('file_id').doUpdateSet({ since: 0 }))
    .execute();
}
