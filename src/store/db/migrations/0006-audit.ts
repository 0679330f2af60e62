/** The append-only audit log of admin changes (who, what, before and after with secrets redacted). */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('audit_id', 'text', (column) => column.primaryKey())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('actor', 'text', (column) => column.notNull())
    .addColumn('actor_key_id', 'text')
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target_type', 'text', (column) => column.notNull())
    .addColumn('target_id', 'text', (column) => column.notNull())
    .addColumn('organization_id', 'text')
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .execute();
  // created_at with the id: the list's order and cursor; the others are its filters (newest first).
  await db.schema
    .createIndex('audit_log_created_at')
    .on('audit_log')
    .columns(['created_at', 'audit_id'])
    .execute();
  await db.schema
    .createIndex('audit_log_target')
    .on('audit_log')
    .columns(['target_type', 'target_id', 'created_at'])
    .execute();
  await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['actor', 'created_at']).execute();
  await db.schema
    .createIndex('audit_log_organization')
    .on('audit_log')
    .columns(['organization_id', 'created_at'])
    .execute();
}
