/**
 * Batch files of the `database` store in chunks (issue 25): `batch_file_chunks` holds a file's text as
 * numbered pieces of a few KiB, so a file is written and read a piece at a time instead of as one text
 * value gathered in memory. Pieces are text, as `content` was (every stored file is UTF-8 without NUL:
 * uploads are checked line by line, outputs are JSON), each cut between two characters; as text they
 * cross the wire once, where bytea would be hex encoded to twice their size. `batch_file_pending` names files whose chunks belong to no
 * visible file yet (a write in progress) or any more (a removal in progress), with since when (epoch ms),
 * so chunks a dead process left behind are found and removed (batch-file-repository.ts).
 *
 * Files stored before this migration (their bytes in `batch_files.content`) are copied into chunks,
 * one file at a time. `content` is kept as it was, so replicas of the previous build still read those
 * files during a rolling upgrade; it is cleared when the file is deleted. Every step tolerates being
 * run again (SQLite runs migrations outside a transaction).
 */
import { type Kysely, sql } from 'kysely';

/** UTF-16 code units per chunk of a copied file (the reader takes chunks of any size, in order). */
const COPY_CHUNK_UNITS = 16 * 1024;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('batch_file_chunks')
    .ifNotExists()
    .addColumn('file_id', 'text', (column) => column.notNull())
    .addColumn('seq', 'integer', (column) => column.notNull())
    .addColumn('data', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('batch_file_chunks_pk', ['file_id', 'seq'])
    .execute();
  await db.schema
    .createTable('batch_file_pending')
    .ifNotExists()
    .addColumn('file_id', 'text', (column) => column.primaryKey())
    .addColumn('since', 'bigint', (column) => column.notNull())
    .execute();
  await copyStoredContent(db);
}

/** Copies every live database-stored file's `content` into chunks (existing chunks are kept). */
async function copyStoredContent(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ id: string }>`SELECT id FROM batch_files
    WHERE storage = 'database' AND content IS NOT NULL AND deleted_at IS NULL ORDER BY id`.execute(db);
  for (const { id } of rows) {
    const found = await sql<{ content: string }>`SELECT content FROM batch_files WHERE id = ${id}`.execute(
      db,
    );
    const content = found.rows[0]?.content ?? '';
    for (let seq = 0, start = 0; start < content.length; seq++) {
      let end = Math.min(start + COPY_CHUNK_UNITS, content.length);
      // Never between the two halves of a surrogate pair (one character outside the BMP).
      const last = content.charCodeAt(end - 1);
      if (end < content.length && last >= 0xd800 && last <= 0xdbff) end--;
      await sql`INSERT INTO batch_file_chunks (file_id, seq, data) VALUES (${id}, ${seq}, ${content.slice(start, end)})
        ON CONFLICT (file_id, seq) DO NOTHING`.execute(db);
      start = end;
    }
  }
}
