/**
 * Persistence of MCP tool policies. A policy names a tool (or `*` for every tool of the server) and a
 * scope; the server-wide default is stored with scope_type `server` and an empty scope_id.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema, McpToolPoliciesTable } from '../tables.ts';
import type { Page, PageRequest } from './limit-columns.ts';
import { scopeInOrganization } from './organization-scope.ts';

export type McpPolicyScopeType = 'organization' | 'team' | 'api_key' | 'server';

export interface McpPolicyLimits {
  enabled: boolean;
  require_approval: 'never' | 'manual';
  max_rpm: number | null;
  max_concurrency: number | null;
  result_cache_ttl_seconds: number | null;
  max_total_execution_time_ms: number | null;
}

/** What an update may change: the limits and whether a server-wide policy is a ceiling. */
export type McpPolicyChanges = Partial<McpPolicyLimits> & { is_ceiling?: boolean };

export interface McpToolPolicyRecord extends McpPolicyLimits {
  policy_id: string;
  server_id: string;
  tool_name: string;
  scope_type: McpPolicyScopeType;
  scope_id: string;
  /** A server-wide policy that narrower scopes may only tighten (policy-resolution.ts). */
  is_ceiling: boolean;
  created_at: number;
  updated_at: number;
}

export interface McpPolicyFilter {
  serverId?: string | undefined;
  /** Only scopes inside this organization (an organization administrator's view). */
  organizationId?: string | undefined;
  toolName?: string | undefined;
  scopeType?: string | undefined;
  scopeId?: string | undefined;
}

export class McpToolPolicyRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(policyId: string): Promise<McpToolPolicyRecord | undefined> {
    const row = await this.db
      .selectFrom('mcp_tool_policies')
      .selectAll()
      .where('policy_id', '=', policyId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async findByScope(
    serverId: string,
    toolName: string,
    scopeType: string,
    scopeId: string,
  ): Promise<McpToolPolicyRecord | undefined> {
    const row = await this.db
      .selectFrom('mcp_tool_policies')
      .selectAll()
      .where('server_id', '=', serverId)
      .where('tool_name', '=', toolName)
      .where('scope_type', '=', scopeType)
      .where('scope_id', '=', scopeId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(page: PageRequest, filter: McpPolicyFilter = {}): Promise<Page<McpToolPolicyRecord>> {
    let query = this.db.selectFrom('mcp_tool_policies');
    if (filter.serverId !== undefined) query = query.where('server_id', '=', filter.serverId);
    if (filter.organizationId !== undefined) {
      const organizationId = filter.organizationId;
      query = query.where((eb) => scopeInOrganization(eb, this.db, organizationId));
    }
    if (filter.toolName !== undefined) query = query.where('tool_name', '=', filter.toolName);
    if (filter.scopeType !== undefined) query = query.where('scope_type', '=', filter.scopeType);
    if (filter.scopeId !== undefined) query = query.where('scope_id', '=', filter.scopeId);
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at')
        .orderBy('policy_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  async listAll(): Promise<McpToolPolicyRecord[]> {
    const rows = await this.db.selectFrom('mcp_tool_policies').selectAll().orderBy('created_at').execute();
    return rows.map(toRecord);
  }

  async insert(policy: Omit<McpToolPolicyRecord, 'created_at' | 'updated_at'>, now: number): Promise<void> {
    await this.db
      .insertInto('mcp_tool_policies')
      .values({
        policy_id: policy.policy_id,
        server_id: policy.server_id,
        tool_name: policy.tool_name,
        scope_type: policy.scope_type,
        scope_id: policy.scope_id,
        enabled: policy.enabled ? 1 : 0,
        require_approval: policy.require_approval,
        max_rpm: policy.max_rpm,
        max_concurrency: policy.max_concurrency,
        result_cache_ttl_seconds: policy.result_cache_ttl_seconds,
        max_total_execution_time_ms: policy.max_total_execution_time_ms,
        is_ceiling: policy.is_ceiling ? 1 : 0,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async update(policyId: string, changes: McpPolicyChanges, now: number): Promise<void> {
    await this.db
      .updateTable('mcp_tool_policies')
      .set({ ...limitColumns(changes), updated_at: now })
      .where('policy_id', '=', policyId)
      .execute();
  }

  async delete(policyId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('mcp_tool_policies')
      .where('policy_id', '=', policyId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

/** Only the fields present become columns, so an update keeps the others. */
function limitColumns(limits: McpPolicyChanges): Partial<McpToolPoliciesTable> {
  const columns: Partial<McpToolPoliciesTable> = {};
  if (limits.is_ceiling !== undefined) columns.is_ceiling = limits.is_ceiling ? 1 : 0;
  if (limits.enabled !== undefined) columns.enabled = limits.enabled ? 1 : 0;
  if (limits.require_approval !== undefined) columns.require_approval = limits.require_approval;
  for (const name of [
    'max_rpm',
    'max_concurrency',
    'result_cache_ttl_seconds',
    'max_total_execution_time_ms',
  ] as const) {
    if (limits[name] !== undefined) columns[name] = limits[name];
  }
  return columns;
}

function toRecord(row: McpToolPoliciesTable): McpToolPolicyRecord {
  return {
    policy_id: row.policy_id,
    server_id: row.server_id,
    tool_name: row.tool_name,
    scope_type: row.scope_type as McpPolicyScopeType,
    scope_id: row.scope_id,
    enabled: Number(row.enabled) === 1,
    require_approval: row.require_approval === 'manual' ? 'manual' : 'never',
    max_rpm: row.max_rpm === null ? null : Number(row.max_rpm),
    max_concurrency: row.max_concurrency === null ? null : Number(row.max_concurrency),
    result_cache_ttl_seconds:
      row.result_cache_ttl_seconds === null ? null : Number(row.result_cache_ttl_seconds),
    max_total_execution_time_ms:
      row.max_total_execution_time_ms === null ? null : Number(row.max_total_execution_time_ms),
    is_ceiling: Number(row.is_ceiling) === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
