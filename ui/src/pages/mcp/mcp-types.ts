/**
 * The JSON of the MCP admin API as the console reads it (src/http/schemas/mcp-views.ts and
 * src/mcp/admin/admin-schemas.ts are the gateway's side; docs/mcp.md describes both).
 */

export interface ListAnswer<T> {
  object: 'list';
  data: T[];
  total: number;
  limit: number;
  offset: number;
}

export interface McpServer {
  server_id: string;
  server_key: string;
  name: string;
  transport: 'streamable_http';
  base_url: string;
  enabled: boolean;
  auth_mode: string;
  /** Secrets are write-only: only whether a token is set. */
  auth_config: { token_set: boolean };
  forwarded_headers_allowlist: string[];
  request_timeout_ms: number;
  /** `config` (mcp_servers in the config file) or `api`. */
  source: string;
  tool_count: number;
  tools_refreshed_at: string | null;
  last_refresh_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface RefreshOutcome {
  ok: boolean;
  tool_count?: number;
  skipped_tools?: number;
  error?: string;
}

export interface McpTool {
  /** server_key.tool_name */
  name: string;
  tool_name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  refreshed_at: string;
}

export type ScopeType = 'organization' | 'team' | 'api_key';

export interface McpBinding {
  binding_id: string;
  server_id: string;
  scope_type: ScopeType;
  scope_id: string;
  enabled: boolean;
  tool_allowlist: string[] | null;
  created_at: string;
  updated_at: string;
}

export interface McpPolicy {
  policy_id: string;
  server_id: string;
  tool_name: string;
  /** Null for the server-wide default. */
  scope_type: ScopeType | null;
  scope_id: string | null;
  enabled: boolean;
  require_approval: 'never' | 'manual';
  max_rpm: number | null;
  max_concurrency: number | null;
  result_cache_ttl_seconds: number | null;
  max_total_execution_time_ms: number | null;
  /** A server-wide policy narrower scopes may only tighten (docs/mcp.md, Ceilings). */
  is_ceiling: boolean;
  created_at: string;
  updated_at: string;
}

export interface McpServerDetail extends McpServer {
  tools: McpTool[];
  bindings: McpBinding[];
  policies: McpPolicy[];
}

export interface McpOperation {
  at: string;
  tool: string;
  key_id: string | null;
  outcome: string;
  error_code: number | null;
  duration_ms: number;
}

export interface McpOperations {
  server_id: string;
  server_key: string;
  /** Calls are counted per gateway process since it started. */
  scope: 'process';
  call_counts: Record<string, number>;
  recent_calls: McpOperation[];
  recent_failures: McpOperation[];
  approval_counts: { pending: number; approved: number; rejected: number; expired: number };
  last_refresh_error: string | null;
  tools_refreshed_at: string | null;
}

export interface McpHealth {
  server_id: string;
  ok: boolean;
  latency_ms: number;
  initialize: { ok: boolean; latency_ms: number; protocol_version: string | null; session: boolean };
  tools_list: { ok: boolean; latency_ms: number; tool_count: number | null };
  error: string | null;
  checked_at: string;
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired';

export interface McpApproval {
  approval_request_id: string;
  server_id: string;
  server_key: string | null;
  tool_name: string;
  arguments: Record<string, unknown>;
  forwarded_header_names: string[];
  key_id: string | null;
  key_owner_user_id: string | null;
  status: ApprovalStatus;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  decision_comment: string | null;
  consumed_at: string | null;
  decision_applies_until: string | null;
  /** can_approve is false when the viewer owns or created the calling key (four-eyes). */
  capabilities: { can_decide: boolean; can_approve: boolean };
}

/** The namespaced name a caller used: `server_key.tool_name`. */
export function approvalToolName(approval: McpApproval): string {
  return approval.server_key ? `${approval.server_key}.${approval.tool_name}` : approval.tool_name;
}
