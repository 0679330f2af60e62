/**
 * Files and batches (spec: resources "Batch and file", proxy rule 9; issue 15). Shared contract of the
 * file side (batch-file-repository.ts) and the batch side (batch-repository.ts, the worker's claims):
 *
 * - `batch_files`: uploaded batch inputs (`purpose` `batch`) and the worker's output and error files
 *   (`batch_output`). `storage` says where the bytes live: `database` (in `content`) or `directory`
 *   (a file named after the id under general_settings.batch_file_store). A deleted file keeps its row
 *   with `deleted_at` set until its bytes are gone, so a batch still names it. Times are epoch seconds.
 * - `batches`: one row per batch; the `*_at` columns are epoch seconds (OpenAI's batch object).
 *   `errors` and `metadata` are JSON text. `finalized` (0/1) fences the finalization: the worker that
 *   flips it from 0 writes the output files, any other one stops.
 * - `batch_items`: one row per input line. `lease_token` is incremented on every claim; a result is
 *   written only where the token still matches, so a late result of a reclaimed lease is discarded.
 *   `not_before` and `lease_expires_at` are epoch milliseconds.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('batch_files')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('owner_key_id', 'text', (column) => column.notNull())
    .addColumn('owner_team_id', 'text')
    .addColumn('purpose', 'text', (column) => column.notNull())
    .addColumn('filename', 'text', (column) => column.notNull())
    .addColumn('bytes', 'bigint', (column) => column.notNull())
    .addColumn('line_count', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('storage', 'text', (column) => column.notNull())
    .addColumn('content', 'text')
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('batch_files_owner_team')
    .on('batch_files')
    .columns(['owner_team_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('batch_files_owner_key')
    .on('batch_files')
    .columns(['owner_key_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('owner_key_id', 'text', (column) => column.notNull())
    .addColumn('owner_team_id', 'text')
    .addColumn('endpoint', 'text', (column) => column.notNull())
    .addColumn('input_file_id', 'text', (column) => column.notNull())
    .addColumn('completion_window', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('output_file_id', 'text')
    .addColumn('error_file_id', 'text')
    .addColumn('errors', 'text')
    .addColumn('metadata', 'text')
    .addColumn('total', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('completed', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('in_progress_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .addColumn('finalizing_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('expired_at', 'bigint')
    .addColumn('cancelling_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('finalized', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('batches_status').on('batches').column('status').execute();
  await db.schema
    .createIndex('batches_owner_team')
    .on('batches')
    .columns(['owner_team_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('batches_owner_key')
    .on('batches')
    .columns(['owner_key_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('batch_items')
    .addColumn('batch_id', 'text', (column) => column.notNull())
    .addColumn('line_index', 'integer', (column) => column.notNull())
    .addColumn('custom_id', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('not_before', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_token', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('response', 'text')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('batch_items_pk', ['batch_id', 'line_index'])
    .execute();
  await db.schema
    .createIndex('batch_items_status_not_before')
    .on('batch_items')
    .columns(['status', 'not_before'])
    .execute();
}
