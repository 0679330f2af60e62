/** The response-cache switch (`cache_enabled`: 1, 0, or null to follow the gateway setting) on teams and keys. */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['teams', 'api_keys'] as const) {
    await db.schema.alterTable(table).addColumn('cache_enabled', 'integer').execute();
  }
}
