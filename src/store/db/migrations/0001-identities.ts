/** Organizations, teams, users, API keys and gateway settings. */
import type { CreateTableBuilder, Kysely } from 'kysely';

function withLimits<T extends string>(table: CreateTableBuilder<T>): CreateTableBuilder<T> {
  return table
    .addColumn('rpm_limit', 'bigint')
    .addColumn('tpm_limit', 'bigint')
    .addColumn('rph_limit', 'bigint')
    .addColumn('rpd_limit', 'bigint')
    .addColumn('tpd_limit', 'bigint')
    .addColumn('output_tpm_limit', 'integer')
    .addColumn('model_rpm_limit', 'text')
    .addColumn('model_tpm_limit', 'text')
    .addColumn('model_output_tpm_limit', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull());
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('gateway_settings')
    .addColumn('name', 'text', (column) => column.primaryKey())
    .addColumn('value', 'text', (column) => column.notNull())
    .execute();

  await withLimits(
    db.schema
      .createTable('organizations')
      .addColumn('organization_id', 'text', (column) => column.primaryKey())
      .addColumn('organization_alias', 'text')
      .addColumn('metadata', 'text'),
  ).execute();

  await withLimits(
    db.schema
      .createTable('teams')
      .addColumn('team_id', 'text', (column) => column.primaryKey())
      .addColumn('team_alias', 'text')
      .addColumn('organization_id', 'text', (column) => column.references('organizations.organization_id'))
      .addColumn('metadata', 'text'),
  ).execute();
  await db.schema.createIndex('teams_organization_id').on('teams').column('organization_id').execute();

  await withLimits(
    db.schema
      .createTable('users')
      .addColumn('user_id', 'text', (column) => column.primaryKey())
      .addColumn('email', 'text')
      .addColumn('role', 'text', (column) => column.notNull().defaultTo('member'))
      .addColumn('team_id', 'text', (column) => column.references('teams.team_id').onDelete('set null'))
      .addColumn('organization_id', 'text', (column) => column.references('organizations.organization_id'))
      .addColumn('metadata', 'text'),
  ).execute();
  await db.schema.createIndex('users_team_id').on('users').column('team_id').execute();
  await db.schema.createIndex('users_organization_id').on('users').column('organization_id').execute();

  await withLimits(
    db.schema
      .createTable('api_keys')
      .addColumn('key_id', 'text', (column) => column.primaryKey())
      .addColumn('key_hash', 'text', (column) => column.notNull().unique())
      .addColumn('key_prefix', 'text', (column) => column.notNull())
      .addColumn('key_name', 'text')
      .addColumn('user_id', 'text', (column) => column.references('users.user_id').onDelete('cascade'))
      .addColumn('team_id', 'text', (column) => column.references('teams.team_id').onDelete('cascade'))
      .addColumn('models', 'text')
      .addColumn('expires_at', 'bigint')
      .addColumn('blocked', 'integer', (column) => column.notNull().defaultTo(0))
      .addColumn('max_parallel_requests', 'integer')
      .addColumn('metadata', 'text'),
  ).execute();
  await db.schema
    .createTable('cache_invalidations')
    .addColumn('invalidation_id', 'text', (column) => column.primaryKey())
    .addColumn('message', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema.createIndex('api_keys_user_id').on('api_keys').column('user_id').execute();
  await db.schema.createIndex('api_keys_team_id').on('api_keys').column('team_id').execute();
}
