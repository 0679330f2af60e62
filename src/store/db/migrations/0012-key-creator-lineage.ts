/**
 * The people behind each API key (issue 25, four-eyes): a JSON array of `user:<id>` labels, the key's
 * creator first, then the creators of the key that created it, and so on. Null for older keys.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('created_by_lineage', 'text').execute();
}
