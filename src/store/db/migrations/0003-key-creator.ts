/** Who created each API key (`master` or `user:<id>`), so the creator cannot approve its calls (four-eyes). */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
}
