/**
 * Spend: one row per answered request (`spend_logs`), daily aggregates per scope and model
 * (`spend_daily`), and the outbox that makes a charge durable before a stream's terminal marker in
 * `outbox` mode (`spend_outbox`). They live in the telemetry database (the main one by default).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('spend_logs')
    // The gateway's own id: a caller chooses its x-request-id, so that cannot be the key.
    .addColumn('spend_id', 'text', (column) => column.primaryKey())
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('key_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('team_id', 'text')
    .addColumn('organization_id', 'text')
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('model_group', 'text')
    .addColumn('deployment_id', 'text')
    .addColumn('endpoint', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull())
    .addColumn('stream', 'integer', (column) => column.notNull())
    .addColumn('status', 'integer', (column) => column.notNull())
    .addColumn('usage_known', 'integer', (column) => column.notNull())
    .addColumn('prompt_tokens', 'bigint')
    .addColumn('completion_tokens', 'bigint')
    .addColumn('reasoning_tokens', 'bigint')
    .addColumn('cached_tokens', 'bigint')
    .addColumn('cache_creation_tokens', 'bigint')
    .addColumn('total_tokens', 'bigint')
    .addColumn('cost', 'double precision')
    .addColumn('latency_ms', 'integer', (column) => column.notNull())
    .addColumn('ttft_ms', 'integer')
    .addColumn('cache_hit', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  // Every read is a time range, alone or within one scope; a model filter narrows a time range.
  await db.schema.createIndex('spend_logs_created_at').on('spend_logs').column('created_at').execute();
  await db.schema.createIndex('spend_logs_request_id').on('spend_logs').column('request_id').execute();
  for (const column of ['key_id', 'user_id', 'team_id', 'organization_id'] as const) {
    await db.schema
      .createIndex(`spend_logs_${column}`)
      .on('spend_logs')
      .columns([column, 'created_at'])
      .execute();
  }

  await db.schema
    .createTable('spend_daily')
    .addColumn('day', 'text', (column) => column.notNull())
    .addColumn('scope_type', 'text', (column) => column.notNull())
    .addColumn('scope_id', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('requests', 'bigint', (column) => column.notNull())
    .addColumn('failed_requests', 'bigint', (column) => column.notNull())
    .addColumn('prompt_tokens', 'bigint', (column) => column.notNull())
    .addColumn('completion_tokens', 'bigint', (column) => column.notNull())
    .addColumn('total_tokens', 'bigint', (column) => column.notNull())
    .addColumn('unknown_usage_requests', 'bigint', (column) => column.notNull())
    .addColumn('cost', 'double precision', (column) => column.notNull())
    .addPrimaryKeyConstraint('spend_daily_pk', ['day', 'scope_type', 'scope_id', 'model'])
    .execute();

  await db.schema
    .createTable('spend_outbox')
    .addColumn('spend_id', 'text', (column) => column.primaryKey())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('record', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('spend_outbox_created_at').on('spend_outbox').column('created_at').execute();
}
