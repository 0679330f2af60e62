/**
 * `is_ceiling` on MCP tool policies (issue 25): 1 makes a server-wide policy a ceiling that narrower
 * scopes may only tighten; 0 (every existing policy) keeps it a default they may override.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('mcp_tool_policies')
    .addColumn('is_ceiling', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}
