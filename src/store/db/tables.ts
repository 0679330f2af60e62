/** Table types for Kysely: the one schema shared by SQLite and PostgreSQL (see migrations/). */

/** Identity limit columns present on organizations, teams, users and keys. Maps are JSON text. */
export interface LimitColumns {
  rpm_limit: number | null;
  tpm_limit: number | null;
  rph_limit: number | null;
  rpd_limit: number | null;
  tpd_limit: number | null;
  output_tpm_limit: number | null;
  model_rpm_limit: string | null;
  model_tpm_limit: string | null;
  model_output_tpm_limit: string | null;
  /** Spend budgets in USD (migration 0005); `budget_duration` is `Nd`/`Nh`, null for a lifetime budget. */
  max_budget: number | null;
  soft_budget: number | null;
  budget_duration: string | null;
}

export interface Timestamps {
  /** Epoch milliseconds. */
  created_at: number;
  updated_at: number;
}

export interface OrganizationsTable extends LimitColumns, Timestamps {
  organization_id: string;
  organization_alias: string | null;
  metadata: string | null;
}

export interface TeamsTable extends LimitColumns, Timestamps {
  team_id: string;
  team_alias: string | null;
  organization_id: string | null;
  metadata: string | null;
  /** Response cache switch (migration 0007): 1, 0, or null to follow the gateway setting. */
  cache_enabled: number | null;
}

export interface UsersTable extends LimitColumns, Timestamps {
  user_id: string;
  email: string | null;
  role: string;
  team_id: string | null;
  organization_id: string | null;
  metadata: string | null;
}

export interface ApiKeysTable extends LimitColumns, Timestamps {
  key_id: string;
  key_hash: string;
  /** The first characters of the secret, for display (`sk-AbC…`). */
  key_prefix: string;
  key_name: string | null;
  user_id: string | null;
  team_id: string | null;
  /** JSON array of model names, or null for every model. */
  models: string | null;
  expires_at: number | null;
  /** 0 or 1 (integers keep SQLite and PostgreSQL identical). */
  blocked: number;
  max_parallel_requests: number | null;
  /** Response cache switch (migration 0007): 1, 0, or null to follow the team, then the gateway. */
  cache_enabled: number | null;
  metadata: string | null;
  /** `master` or `user:<user_id>`; null for keys created before it was recorded. */
  created_by: string | null;
  /** JSON array of the `user:<id>` labels behind the key, creator first (migration 0011); null before. */
  created_by_lineage: string | null;
}

export interface GatewaySettingsTable {
  name: string;
  value: string;
}

/** Cache-invalidation records written in the transaction of an admin change, published by a worker. */
export interface CacheInvalidationsTable {
  invalidation_id: string;
  message: string;
  created_at: number;
}

export interface DatabaseSchema {
  organizations: OrganizationsTable;
  teams: TeamsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  gateway_settings: GatewaySettingsTable;
  cache_invalidations: CacheInvalidationsTable;
  mcp_servers: McpServersTable;
  mcp_tools: McpToolsTable;
  mcp_bindings: McpBindingsTable;
  mcp_tool_policies: McpToolPoliciesTable;
  mcp_approval_requests: McpApprovalRequestsTable;
  spend_logs: SpendLogsTable;
  spend_daily: SpendDailyTable;
  spend_outbox: SpendOutboxTable;
  audit_log: AuditLogTable;
  tier_policies: TierPoliciesTable;
  batch_files: BatchFilesTable;
  batches: BatchesTable;
  batch_items: BatchItemsTable;
  batch_finalizations: BatchFinalizationsTable;
  batch_file_chunks: BatchFileChunksTable;
  batch_file_pending: BatchFilePendingTable;
}

/** Batch input, output and error files (migration 0009). Times are epoch seconds. */
export interface BatchFilesTable {
  id: string;
  owner_key_id: string;
  owner_team_id: string | null;
  /** `batch` (uploaded input) or `batch_output` (written by the worker). */
  purpose: string;
  filename: string;
  bytes: number;
  line_count: number;
  created_at: number;
  /** `database` (bytes in `batch_file_chunks`) or `directory` (a file under general_settings.batch_file_store). */
  storage: string;
  /** The whole text of a file stored before migration 0011 (kept for older replicas; never written now). */
  content: string | null;
  deleted_at: number | null;
}

/** The text of a `database`-stored file, in pieces numbered from 0, each cut between characters (migration 0011). */
export interface BatchFileChunksTable {
  file_id: string;
  seq: number;
  data: string;
}

/** Files whose chunks are being written or removed, since `since` (epoch ms; migration 0011). */
export interface BatchFilePendingTable {
  file_id: string;
  since: number;
}

/** One batch (migration 0009): OpenAI's batch object; `*_at` are epoch seconds, JSON columns are text. */
export interface BatchesTable {
  id: string;
  owner_key_id: string;
  owner_team_id: string | null;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: string;
  output_file_id: string | null;
  error_file_id: string | null;
  errors: string | null;
  metadata: string | null;
  total: number;
  completed: number;
  failed: number;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  /** 0 or 1: 1 once the finalizer attached the output files (migration 0010). */
  finalized: number;
}

/** A batch's finalization lease (migration 0010); `expires_at` is epoch ms. */
export interface BatchFinalizationsTable {
  batch_id: string;
  owner: string;
  /** Grows on every claim; names the files of that attempt and fences the attach. */
  token: number;
  expires_at: number;
  /** 1 once the files are attached and the batch is terminal. */
  attached: number;
}

/** One input line of a batch (migration 0009); `not_before` and `lease_expires_at` are epoch ms. */
export interface BatchItemsTable {
  batch_id: string;
  line_index: number;
  custom_id: string;
  /** JSON of the line's `body`. */
  body: string;
  /** pending, leased, succeeded, failed, cancelled or expired. */
  status: string;
  attempts: number;
  not_before: number;
  lease_owner: string | null;
  /** Incremented on every claim; a result is written only while it still matches. */
  lease_token: number;
  lease_expires_at: number | null;
  /** JSON of the output line's `response`. */
  response: string | null;
  /** JSON of the output line's `error`. */
  error: string | null;
}

/** Output-token limit per organization and exact caller-facing model (migration 0008). */
export interface TierPoliciesTable extends Timestamps {
  tier_policy_id: string;
  organization_id: string;
  model: string;
  output_tpm_limit: number;
}

/** One admin change (docs/audit.md): appended in the change's transaction, never updated. */
export interface AuditLogTable {
  audit_id: string;
  /** Epoch milliseconds. */
  created_at: number;
  /** `master` or `user:<user_id>`. */
  actor: string;
  actor_key_id: string | null;
  /** `<target_type>.<verb>`, e.g. `team.update`. */
  action: string;
  target_type: string;
  target_id: string;
  /** The organization the target belongs to (org administrators see only theirs). */
  organization_id: string | null;
  request_id: string;
  /** JSON of the target before and after the change, secrets redacted; null when it did not exist. */
  before: string | null;
  after: string | null;
}

/** One answered (or failed) proxied request; booleans are 0/1 on both dialects. */
export interface SpendLogsTable {
  /** The gateway's own id of the record (unique; a caller may reuse its x-request-id). */
  spend_id: string;
  /** The answer's x-request-id. */
  request_id: string;
  /** Epoch milliseconds when the request was settled. */
  created_at: number;
  key_id: string | null;
  user_id: string | null;
  team_id: string | null;
  organization_id: string | null;
  /** The public model the caller asked for. */
  model: string;
  /** The model group that answered (another one after a fallback). */
  model_group: string | null;
  deployment_id: string | null;
  endpoint: string;
  attempts: number;
  stream: number;
  status: number;
  /** 0 when a provider call's usage did not come from its report (estimated, or null counts). */
  usage_known: number;
  /** 1 when a call was charged the gateway's estimate (migration 0011). */
  usage_estimated: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  reasoning_tokens: number | null;
  cached_tokens: number | null;
  cache_creation_tokens: number | null;
  total_tokens: number | null;
  /** USD; null when the usage or a price is unknown. */
  cost: number | null;
  latency_ms: number;
  ttft_ms: number | null;
  cache_hit: number;
}

/** Daily totals per scope (`key`, `user`, `team`, `organization`, or `all` with scope_id '') and model. */
export interface SpendDailyTable {
  /** YYYY-MM-DD, UTC. */
  day: string;
  scope_type: string;
  scope_id: string;
  model: string;
  requests: number;
  failed_requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  unknown_usage_requests: number;
  cost: number;
}

/** Charges accepted durably (outbox mode) and not yet moved into spend_logs and spend_daily. */
export interface SpendOutboxTable {
  spend_id: string;
  created_at: number;
  /** JSON of the spend record. */
  record: string;
}

/** MCP tool servers; the bearer token is stored encrypted (`auth_token_sealed`) and never returned. */
export interface McpServersTable extends Timestamps {
  server_id: string;
  /** Unique namespace of the server's tools (`server_key.tool_name`). */
  server_key: string;
  name: string;
  transport: string;
  base_url: string;
  /** 0 or 1. */
  enabled: number;
  auth_mode: string;
  auth_token_sealed: string | null;
  /** JSON array of header names. */
  forwarded_headers_allowlist: string;
  request_timeout_ms: number;
  /** `config` (bootstrapped from mcp_servers) or `api`. */
  source: string;
  tools_refreshed_at: number | null;
  last_refresh_error: string | null;
}

/** The stored tool catalogue of each server, so tools/list never waits on an upstream. */
export interface McpToolsTable {
  server_id: string;
  tool_name: string;
  description: string | null;
  /** JSON schema object. */
  input_schema: string;
  /** The whole upstream tool definition as JSON (title, annotations, outputSchema …). */
  definition: string;
  refreshed_at: number;
}

export interface McpBindingsTable extends Timestamps {
  binding_id: string;
  server_id: string;
  scope_type: string;
  scope_id: string;
  enabled: number;
  /** JSON array of tool names, or null for every tool. */
  tool_allowlist: string | null;
}

export interface McpToolPoliciesTable extends Timestamps {
  policy_id: string;
  server_id: string;
  /** A tool name, or `*` for every tool of the server. */
  tool_name: string;
  /** organization, team, api_key, or `server` for the server-wide default (scope_id ''). */
  scope_type: string;
  scope_id: string;
  enabled: number;
  require_approval: string;
  max_rpm: number | null;
  max_concurrency: number | null;
  result_cache_ttl_seconds: number | null;
  max_total_execution_time_ms: number | null;
  /** 1: a server-wide ceiling narrower scopes may only tighten (migration 0012); 0: a default. */
  is_ceiling: number;
}

export interface McpApprovalRequestsTable {
  approval_request_id: string;
  server_id: string;
  tool_name: string;
  /** SHA-256 of the canonical call: API key, server, tool, arguments, forwarded headers. */
  call_hash: string;
  key_id: string | null;
  /** The user the calling key belonged to (who may not approve it). */
  key_owner_user_id: string | null;
  /** JSON of the call's arguments, shown to deciders. */
  arguments: string;
  /** JSON array of the names of the forwarded headers (never their values). */
  forwarded_header_names: string;
  /** pending, approved or rejected; `expired` is derived from the time. */
  status: string;
  created_at: number;
  decided_at: number | null;
  decided_by: string | null;
  decision_comment: string | null;
  consumed_at: number | null;
}
