/** Persistence of MCP bindings: which organization, team or API key may see a server's tools. */
import type { Kysely } from 'kysely';
import type { DatabaseSchema, McpBindingsTable } from '../tables.ts';
import type { Page, PageRequest } from './limit-columns.ts';
import { scopeInOrganization } from './organization-scope.ts';

export type McpScopeType = 'organization' | 'team' | 'api_key';

export interface McpBindingRecord {
  binding_id: string;
  server_id: string;
  scope_type: McpScopeType;
  scope_id: string;
  enabled: boolean;
  /** Tool names without the server prefix; null allows every tool. */
  tool_allowlist: string[] | null;
  created_at: number;
  updated_at: number;
}

export interface McpBindingFilter {
  serverId?: string | undefined;
  /** Only scopes inside this organization (an organization administrator's view). */
  organizationId?: string | undefined;
  scopeType?: string | undefined;
  scopeId?: string | undefined;
}

export class McpBindingRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(bindingId: string): Promise<McpBindingRecord | undefined> {
    const row = await this.db
      .selectFrom('mcp_bindings')
      .selectAll()
      .where('binding_id', '=', bindingId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async findByScope(
    serverId: string,
    scopeType: string,
    scopeId: string,
  ): Promise<McpBindingRecord | undefined> {
    const row = await this.db
      .selectFrom('mcp_bindings')
      .selectAll()
      .where('server_id', '=', serverId)
      .where('scope_type', '=', scopeType)
      .where('scope_id', '=', scopeId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(page: PageRequest, filter: McpBindingFilter = {}): Promise<Page<McpBindingRecord>> {
    let query = this.db.selectFrom('mcp_bindings');
    if (filter.serverId !== undefined) query = query.where('server_id', '=', filter.serverId);
    if (filter.organizationId !== undefined) {
      const organizationId = filter.organizationId;
      query = query.where((eb) => scopeInOrganization(eb, this.db, organizationId));
    }
    if (filter.scopeType !== undefined) query = query.where('scope_type', '=', filter.scopeType);
    if (filter.scopeId !== undefined) query = query.where('scope_id', '=', filter.scopeId);
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at')
        .orderBy('binding_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  async listAll(): Promise<McpBindingRecord[]> {
    const rows = await this.db.selectFrom('mcp_bindings').selectAll().orderBy('created_at').execute();
    return rows.map(toRecord);
  }

  async insert(binding: Omit<McpBindingRecord, 'created_at' | 'updated_at'>, now: number): Promise<void> {
    await this.db
      .insertInto('mcp_bindings')
      .values({
        binding_id: binding.binding_id,
        server_id: binding.server_id,
        scope_type: binding.scope_type,
        scope_id: binding.scope_id,
        enabled: binding.enabled ? 1 : 0,
        tool_allowlist: binding.tool_allowlist === null ? null : JSON.stringify(binding.tool_allowlist),
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async update(
    bindingId: string,
    changes: { enabled?: boolean; tool_allowlist?: string[] | null },
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable('mcp_bindings')
      .set({
        ...(changes.enabled !== undefined ? { enabled: changes.enabled ? 1 : 0 } : {}),
        ...(changes.tool_allowlist !== undefined
          ? {
              tool_allowlist: changes.tool_allowlist === null ? null : JSON.stringify(changes.tool_allowlist),
            }
          : {}),
        updated_at: now,
      })
      .where('binding_id', '=', bindingId)
      .execute();
  }

  async delete(bindingId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('mcp_bindings')
      .where('binding_id', '=', bindingId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function toRecord(row: McpBindingsTable): McpBindingRecord {
  return {
    binding_id: row.binding_id,
    server_id: row.server_id,
    scope_type: row.scope_type as McpScopeType,
    scope_id: row.scope_id,
    enabled: Number(row.enabled) === 1,
    tool_allowlist: row.tool_allowlist === null ? null : (JSON.parse(row.tool_allowlist) as string[]),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
