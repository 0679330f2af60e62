/**
 * `spend_logs.usage_estimated`: 1 when a request was charged the gateway's estimate of a call whose
 * usage report never came or could not be read (issue 25); older rows were never estimated (0).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('spend_logs')
    .addColumn('usage_estimated', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}
