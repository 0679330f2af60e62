/** Persistence of MCP tool servers. The bearer token is kept sealed; this layer never opens it. */
import type { Kysely } from 'kysely';
import type { DatabaseSchema, McpServersTable } from '../tables.ts';
import type { Page, PageRequest } from './limit-columns.ts';

export interface McpServerRecord {
  server_id: string;
  server_key: string;
  name: string;
  transport: 'streamable_http';
  base_url: string;
  enabled: boolean;
  auth_mode: 'none' | 'bearer';
  auth_token_sealed: string | null;
  forwarded_headers_allowlist: string[];
  request_timeout_ms: number;
  source: 'config' | 'api';
  tools_refreshed_at: number | null;
  last_refresh_error: string | null;
  created_at: number;
  updated_at: number;
}

export type McpServerChanges = Partial<
  Pick<
    McpServerRecord,
    | 'server_key'
    | 'name'
    | 'base_url'
    | 'enabled'
    | 'auth_mode'
    | 'auth_token_sealed'
    | 'forwarded_headers_allowlist'
    | 'request_timeout_ms'
    | 'source'
  >
>;

export type NewMcpServer = Omit<
  McpServerRecord,
  'transport' | 'tools_refreshed_at' | 'last_refresh_error' | 'created_at' | 'updated_at'
>;

export class McpServerRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(serverId: string): Promise<McpServerRecord | undefined> {
    const row = await this.db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('server_id', '=', serverId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async getByKey(serverKey: string): Promise<McpServerRecord | undefined> {
    const row = await this.db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('server_key', '=', serverKey)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(page: PageRequest): Promise<Page<McpServerRecord>> {
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom('mcp_servers')
        .selectAll()
        .orderBy('created_at')
        .orderBy('server_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      this.db
        .selectFrom('mcp_servers')
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  async listAll(): Promise<McpServerRecord[]> {
    const rows = await this.db.selectFrom('mcp_servers').selectAll().orderBy('server_key').execute();
    return rows.map(toRecord);
  }

  async insert(server: NewMcpServer, now: number): Promise<void> {
    await this.db
      .insertInto('mcp_servers')
      .values({
        server_id: server.server_id,
        server_key: server.server_key,
        name: server.name,
        transport: 'streamable_http',
        base_url: server.base_url,
        enabled: server.enabled ? 1 : 0,
        auth_mode: server.auth_mode,
        auth_token_sealed: server.auth_token_sealed,
        forwarded_headers_allowlist: JSON.stringify(server.forwarded_headers_allowlist),
        request_timeout_ms: server.request_timeout_ms,
        source: server.source,
        tools_refreshed_at: null,
        last_refresh_error: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async update(serverId: string, changes: McpServerChanges, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('mcp_servers')
      .set({
        ...(changes.server_key !== undefined ? { server_key: changes.server_key } : {}),
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.base_url !== undefined ? { base_url: changes.base_url } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled ? 1 : 0 } : {}),
        ...(changes.auth_mode !== undefined ? { auth_mode: changes.auth_mode } : {}),
        ...(changes.auth_token_sealed !== undefined ? { auth_token_sealed: changes.auth_token_sealed } : {}),
        ...(changes.forwarded_headers_allowlist !== undefined
          ? { forwarded_headers_allowlist: JSON.stringify(changes.forwarded_headers_allowlist) }
          : {}),
        ...(changes.request_timeout_ms !== undefined
          ? { request_timeout_ms: changes.request_timeout_ms }
          : {}),
        ...(changes.source !== undefined ? { source: changes.source } : {}),
        updated_at: now,
      })
      .where('server_id', '=', serverId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async recordRefresh(serverId: string, at: number, error: string | null): Promise<void> {
    await this.db
      .updateTable('mcp_servers')
      .set(
        error === null ? { tools_refreshed_at: at, last_refresh_error: null } : { last_refresh_error: error },
      )
      .where('server_id', '=', serverId)
      .execute();
  }

  async delete(serverId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('mcp_servers')
      .where('server_id', '=', serverId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function toRecord(row: McpServersTable): McpServerRecord {
  return {
    server_id: row.server_id,
    server_key: row.server_key,
    name: row.name,
    transport: 'streamable_http',
    base_url: row.base_url,
    enabled: Number(row.enabled) === 1,
    auth_mode: row.auth_mode === 'bearer' ? 'bearer' : 'none',
    auth_token_sealed: row.auth_token_sealed,
    forwarded_headers_allowlist: JSON.parse(row.forwarded_headers_allowlist) as string[],
    request_timeout_ms: Number(row.request_timeout_ms),
    source: row.source === 'config' ? 'config' : 'api',
    tools_refreshed_at: row.tools_refreshed_at,
    last_refresh_error: row.last_refresh_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
