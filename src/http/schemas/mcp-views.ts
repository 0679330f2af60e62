/** Response schemas of the MCP admin API (they also decide what is serialized: nothing secret). */
import Type from 'typebox';

const Time = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([Time, Type.Null()]);
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const FreeObject = Type.Record(Type.String(), Type.Unknown());

export const McpServerView = Type.Object({
  server_id: Type.String(),
  server_key: Type.String(),
  name: Type.String(),
  transport: Type.Literal('streamable_http'),
  base_url: Type.String(),
  enabled: Type.Boolean(),
  auth_mode: Type.String(),
  auth_config: Type.Object(
    { token_set: Type.Boolean() },
    { description: 'Secrets are write-only: only whether a token is set.' },
  ),
  forwarded_headers_allowlist: Type.Array(Type.String()),
  request_timeout_ms: Type.Integer(),
  source: Type.String({ description: '`config` (mcp_servers) or `api`.' }),
  tool_count: Type.Integer(),
  tools_refreshed_at: NullableTime,
  last_refresh_error: NullableString,
  created_at: Time,
  updated_at: Time,
});

export const RefreshView = Type.Object({
  ok: Type.Boolean(),
  tool_count: Type.Optional(Type.Integer()),
  skipped_tools: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.String()),
});

export const McpServerCreatedView = Type.Object({
  ...McpServerView.properties,
  capabilities_refresh: RefreshView,
});

export const McpRefreshView = Type.Object({ ...RefreshView.properties, server: McpServerView });

export const McpBindingView = Type.Object({
  binding_id: Type.String(),
  server_id: Type.String(),
  scope_type: Type.String(),
  scope_id: Type.String(),
  enabled: Type.Boolean(),
  tool_allowlist: Type.Union([Type.Array(Type.String()), Type.Null()]),
  created_at: Time,
  updated_at: Time,
});

export const McpPolicyView = Type.Object({
  policy_id: Type.String(),
  server_id: Type.String(),
  tool_name: Type.String(),
  scope_type: NullableString,
  scope_id: NullableString,
  enabled: Type.Boolean(),
  require_approval: Type.String(),
  max_rpm: NullableInteger,
  max_concurrency: NullableInteger,
  result_cache_ttl_seconds: NullableInteger,
  max_total_execution_time_ms: NullableInteger,
  is_ceiling: Type.Boolean(),
  created_at: Time,
  updated_at: Time,
});

export const McpToolView = Type.Object({
  name: Type.String({ description: 'server_key.tool_name' }),
  tool_name: Type.String(),
  description: NullableString,
  input_schema: FreeObject,
  refreshed_at: Time,
});

export const McpServerDetailView = Type.Object({
  ...McpServerView.properties,
  tools: Type.Array(McpToolView),
  bindings: Type.Array(McpBindingView),
  policies: Type.Array(McpPolicyView),
});

const OperationView = Type.Object({
  at: Time,
  tool: Type.String(),
  key_id: NullableString,
  outcome: Type.String(),
  error_code: NullableInteger,
  duration_ms: Type.Number(),
});

export const McpOperationsView = Type.Object({
  server_id: Type.String(),
  server_key: Type.String(),
  scope: Type.Literal('process', { description: 'Calls are counted per gateway process since it started.' }),
  call_counts: Type.Record(Type.String(), Type.Integer()),
  recent_calls: Type.Array(OperationView),
  recent_failures: Type.Array(OperationView),
  approval_counts: Type.Object({
    pending: Type.Integer(),
    approved: Type.Integer(),
    rejected: Type.Integer(),
    expired: Type.Integer(),
  }),
  last_refresh_error: NullableString,
  tools_refreshed_at: NullableTime,
});

const Step = { ok: Type.Boolean(), latency_ms: Type.Number() };

export const McpHealthView = Type.Object({
  server_id: Type.String(),
  ok: Type.Boolean(),
  latency_ms: Type.Number(),
  initialize: Type.Object({
    ...Step,
    protocol_version: NullableString,
    session: Type.Boolean({ description: 'Whether the upstream keeps a stateful session.' }),
  }),
  tools_list: Type.Object({ ...Step, tool_count: NullableInteger }),
  error: NullableString,
  checked_at: Time,
});

export const McpApprovalView = Type.Object({
  approval_request_id: Type.String(),
  server_id: Type.String(),
  server_key: NullableString,
  tool_name: Type.String(),
  arguments: FreeObject,
  forwarded_header_names: Type.Array(Type.String()),
  key_id: NullableString,
  key_owner_user_id: NullableString,
  status: Type.Enum(['pending', 'approved', 'rejected', 'expired']),
  created_at: Time,
  expires_at: Time,
  decided_at: NullableTime,
  decided_by: NullableString,
  decision_comment: NullableString,
  consumed_at: NullableTime,
  decision_applies_until: NullableTime,
  capabilities: Type.Object({ can_decide: Type.Boolean(), can_approve: Type.Boolean() }),
});
