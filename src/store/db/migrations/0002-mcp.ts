/** MCP tool servers, their stored tool catalogues, bindings, tool policies and approval requests. */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mcp_servers')
    .addColumn('server_id', 'text', (column) => column.primaryKey())
    .addColumn('server_key', 'text', (column) => column.notNull().unique())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('transport', 'text', (column) => column.notNull())
    .addColumn('base_url', 'text', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('auth_mode', 'text', (column) => column.notNull())
    .addColumn('auth_token_sealed', 'text')
    .addColumn('forwarded_headers_allowlist', 'text', (column) => column.notNull())
    .addColumn('request_timeout_ms', 'integer', (column) => column.notNull())
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('tools_refreshed_at', 'bigint')
    .addColumn('last_refresh_error', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('mcp_tools')
    .addColumn('server_id', 'text', (column) =>
      column.notNull().references('mcp_servers.server_id').onDelete('cascade'),
    )
    .addColumn('tool_name', 'text', (column) => column.notNull())
    .addColumn('description', 'text')
    .addColumn('input_schema', 'text', (column) => column.notNull())
    .addColumn('definition', 'text', (column) => column.notNull())
    .addColumn('refreshed_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('mcp_tools_pk', ['server_id', 'tool_name'])
    .execute();

  await db.schema
    .createTable('mcp_bindings')
    .addColumn('binding_id', 'text', (column) => column.primaryKey())
    .addColumn('server_id', 'text', (column) =>
      column.notNull().references('mcp_servers.server_id').onDelete('cascade'),
    )
    .addColumn('scope_type', 'text', (column) => column.notNull())
    .addColumn('scope_id', 'text', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('tool_allowlist', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('mcp_bindings_scope', ['server_id', 'scope_type', 'scope_id'])
    .execute();

  await db.schema
    .createTable('mcp_tool_policies')
    .addColumn('policy_id', 'text', (column) => column.primaryKey())
    .addColumn('server_id', 'text', (column) =>
      column.notNull().references('mcp_servers.server_id').onDelete('cascade'),
    )
    .addColumn('tool_name', 'text', (column) => column.notNull())
    .addColumn('scope_type', 'text', (column) => column.notNull())
    .addColumn('scope_id', 'text', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('require_approval', 'text', (column) => column.notNull())
    .addColumn('max_rpm', 'integer')
    .addColumn('max_concurrency', 'integer')
    .addColumn('result_cache_ttl_seconds', 'integer')
    .addColumn('max_total_execution_time_ms', 'integer')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('mcp_tool_policies_scope', ['server_id', 'tool_name', 'scope_type', 'scope_id'])
    .execute();

  await db.schema
    .createTable('mcp_approval_requests')
    .addColumn('approval_request_id', 'text', (column) => column.primaryKey())
    .addColumn('server_id', 'text', (column) =>
      column.notNull().references('mcp_servers.server_id').onDelete('cascade'),
    )
    .addColumn('tool_name', 'text', (column) => column.notNull())
    .addColumn('call_hash', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text')
    .addColumn('key_owner_user_id', 'text')
    .addColumn('arguments', 'text', (column) => column.notNull())
    .addColumn('forwarded_header_names', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('decided_at', 'bigint')
    .addColumn('decided_by', 'text')
    .addColumn('decision_comment', 'text')
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('mcp_approval_requests_call')
    .on('mcp_approval_requests')
    .columns(['call_hash', 'created_at'])
    .execute();
  await db.schema
    .createIndex('mcp_approval_requests_server')
    .on('mcp_approval_requests')
    .columns(['server_id', 'created_at'])
    .execute();
}
