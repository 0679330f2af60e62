/**
 * Tier policies (spec: Limits > Output tokens rule 8): an output-token limit per organization and exact
 * caller-facing model. One row per pair; deleting the organization deletes its policies.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tier_policies')
    .addColumn('tier_policy_id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) =>
      column.notNull().references('organizations.organization_id').onDelete('cascade'),
    )
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('output_tpm_limit', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('tier_policies_organization_model', ['organization_id', 'model'])
    .execute();
}
