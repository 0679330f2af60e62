/** Persistence of the MCP tool catalogue: the tools each server listed at its last refresh. */
import type { Kysely } from 'kysely';
import type { DatabaseSchema, McpToolsTable } from '../tables.ts';

export interface McpToolRecord {
  server_id: string;
  tool_name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  /** The upstream's whole tool definition. */
  definition: Record<string, unknown>;
  refreshed_at: number;
}

export class McpToolRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async listAll(): Promise<McpToolRecord[]> {
    const rows = await this.db
      .selectFrom('mcp_tools')
      .selectAll()
      .orderBy('server_id')
      .orderBy('tool_name')
      .execute();
    return rows.map(toRecord);
  }

  async listByServer(serverId: string): Promise<McpToolRecord[]> {
    const rows = await this.db
      .selectFrom('mcp_tools')
      .selectAll()
      .where('server_id', '=', serverId)
      .orderBy('tool_name')
      .execute();
    return rows.map(toRecord);
  }

  /** Replaces the server's catalogue; call inside a transaction so readers never see half of it. */
  async replace(
    serverId: string,
    tools: ReadonlyArray<Omit<McpToolRecord, 'server_id' | 'refreshed_at'>>,
    now: number,
  ): Promise<void> {
    await this.db.deleteFrom('mcp_tools').where('server_id', '=', serverId).execute();
    if (tools.length === 0) return;
    await this.db
      .insertInto('mcp_tools')
      .values(
        tools.map((tool) => ({
          server_id: serverId,
          tool_name: tool.tool_name,
          description: tool.description,
          input_schema: JSON.stringify(tool.input_schema),
          definition: JSON.stringify(tool.definition),
          refreshed_at: now,
        })),
      )
      .execute();
  }
}

function toRecord(row: McpToolsTable): McpToolRecord {
  return {
    server_id: row.server_id,
    tool_name: row.tool_name,
    description: row.description,
    input_schema: JSON.parse(row.input_schema) as Record<string, unknown>,
    definition: JSON.parse(row.definition) as Record<string, unknown>,
    refreshed_at: row.refreshed_at,
  };
}
