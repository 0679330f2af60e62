/** The validated, defaulted, deep-frozen configuration every layer receives (never process.env). */
import type { RoutingStrategyName } from './config-schema.ts';
import type { TierModes } from './tier-modes.ts';

export interface ModelParams {
  provider: string;
  model: string;
  api_base?: string;
  api_key?: string;
  timeout?: number;
  stream_timeout?: number;
  connect_timeout?: number;
  weight?: number;
  max_connections?: number;
  [key: string]: unknown;
}

export interface ModelInfo {
  id: string;
  rpm_limit?: number;
  tpm_limit?: number;
  mode?: string;
  default_params?: Readonly<Record<string, unknown>>;
  /** USD prices per unit; each overrides the bundled price table. */
  input_cost_per_token?: number;
  output_cost_per_token?: number;
  cache_read_input_token_cost?: number;
  cache_creation_input_token_cost?: number;
  output_cost_per_reasoning_token?: number;
  /** Per audio token of the prompt and of the completion. */
  input_cost_per_audio_token?: number;
  output_cost_per_audio_token?: number;
  /** Per generated image. */
  output_cost_per_image?: number;
  /** Per second of input audio. */
  input_cost_per_second?: number;
  /** Per rerank search. */
  input_cost_per_query?: number;
  /** Per character of speech input. */
  input_cost_per_character?: number;
  /** The model whose table price applies (an Azure deployment's underlying model). */
  base_model?: string;
  max_input_tokens?: number;
  max_output_tokens?: number;
  owned_by?: string;
  [key: string]: unknown;
}

export interface ModelDeploymentConfig {
  model_name: string;
  params: Readonly<ModelParams>;
  model_info: Readonly<ModelInfo>;
}

export type FallbackMap = Readonly<Record<string, readonly string[]>>;

export interface RouterSettings {
  routing_strategy: RoutingStrategyName;
  routing_strategy_args: { lowest_latency_buffer: number; ttl: number };
  num_retries: number;
  retry_after: number;
  allowed_fails: number;
  cooldown_time: number;
  timeout: number;
  stream_timeout: number;
  connect_timeout: number;
  pool_timeout: number;
  max_connections_per_deployment: number;
  fallbacks: FallbackMap;
  context_window_fallbacks: FallbackMap;
  enable_pre_call_checks: boolean;
}

export interface GeneralSettings {
  master_key: string | undefined;
  salt_key: string | undefined;
  /** A postgres:// URL, or a SQLite file path. */
  database_url: string;
  database_pool_size: number;
  redis_url: string | undefined;
  redis_degraded_mode: 'fail_open' | 'fail_closed';
  redis_command_timeout_ms: number;
  /** Prefix of every Redis key and channel, so deployments can share one Redis. */
  redis_key_prefix: string;
  spend_ingestion_mode: 'legacy' | 'outbox';
  response_cache: ResponseCacheSettings;
  /** Where spend lives (spend_logs, spend_daily, spend_outbox); the main database when not set. */
  telemetry_database_url: string;
  /** Outbox mode: longest wait for a charge's durable acceptance before the answer fails. */
  spend_finalization_timeout_ms: number;
  embeddings_batch_enabled: boolean;
  /** Where batch files live: `database` (their rows) or an absolute directory (created 0700, files 0600). */
  batch_file_store: string;
  /** Largest batch input file POST /v1/files accepts (413 above). */
  batch_file_max_bytes: number;
  /** How long a batch worker holds an item or a finalization before another worker may take it over. */
  batch_lease_seconds: number;
  cache_invalidation_worker_enabled: boolean;
  tier_policy_mode: 'off' | 'shadow' | 'enforce';
  tier_policy_missing_service_mode: 'fail_open' | 'fail_closed';
  auth_cache_ttl_seconds: number;
  max_request_body_bytes: number;
  /** Largest file a multipart upload may carry (audio transcriptions); at least max_request_body_bytes. */
  max_upload_bytes: number;
  /** Bytes of uploads being spooled to disk at once, process-wide (503 past it); at least max_upload_bytes. */
  max_upload_spool_bytes: number;
  request_timeout_seconds: number;
  /** Longest a client may take to send a request body (408 after). */
  body_read_timeout_seconds: number;
  shutdown_grace_seconds: number;
  /** After SIGTERM: how long readiness says 503 while the replica keeps serving, before it stops listening. */
  shutdown_pre_stop_seconds: number;
  request_logging: boolean;
  /** Serve the web console at /ui (its API under /ui/api is served either way). */
  console_enabled: boolean;
  mcp_tool_loop_max_iterations: number;
  mcp_catalog_refresh_interval_seconds: number;
  /** Tool calls one API key may have in flight to one MCP server per process (of its 32 connections). */
  mcp_connections_per_key: number;
  /** How often budget counters are raised to the spend recorded in the database (0: only at start). */
  budget_reconcile_interval_seconds: number;
  /** Output tokens a text request without max_tokens is reserved against budgets for at admission. */
  budget_reservation_default_max_tokens: number;
  /** Host names /mcp answers to (Host and Origin checks against DNS rebinding); `*` allows any. */
  mcp_allowed_hosts: readonly string[];
  /** Hosts provider api_base and MCP base_url may name (exact or `*.domain`); null: any but link-local/metadata. */
  upstream_allowed_hosts: readonly string[] | null;
  /** Days the audit log keeps an entry (default 365); null keeps entries forever. */
  audit_retention_days: number | null;
  /** Peers (addresses, CIDR ranges, loopback/linklocal/uniquelocal) whose X-Forwarded-For names the client. */
  trusted_proxies: readonly string[];
  /** Request-body bytes one key may be sending at once (429 key_body_bytes_exceeded past it). */
  max_concurrent_body_bytes_per_key: number;
  /** PostgreSQL statement_timeout (and client read deadline) of every pooled query; caps SQLite's busy wait. */
  database_statement_timeout_ms: number;
  /** PostgreSQL lock_timeout of every migration statement. */
  database_migration_lock_timeout_ms: number;
  /** Folder (0700) of spend records the telemetry database did not take in time (files 0600). */
  spend_spill_dir: string;
  /** Ready and serving cached keys while the main database is down (LiteLLM's name). */
  allow_requests_on_db_unavailable: boolean;
  /** With allow_requests_on_db_unavailable: how long past auth_cache_ttl_seconds a cached key is served while the database is down. */
  auth_cache_max_stale_seconds: number;
}

export interface McpServerConfig {
  server_key: string;
  name: string;
  transport: 'streamable_http';
  base_url: string;
  enabled: boolean;
  auth_mode: 'none' | 'bearer';
  auth_config: { token?: string };
  forwarded_headers_allowlist: readonly string[];
  request_timeout_ms: number;
}

export interface Config {
  model_list: readonly ModelDeploymentConfig[];
  router_settings: Readonly<RouterSettings>;
  general_settings: Readonly<GeneralSettings>;
  mcp_servers: readonly McpServerConfig[];
  /** The file it came from, or `embedded default`. */
  source: string;
  /** Settings that were accepted but have no effect (LiteLLM keys Switchboard ignores). */
  warnings: readonly string[];
  /** Where each effective tier-policy mode came from (config/tier-modes.ts). */
  tier_mode_sources: Readonly<TierModes['sources']>;
}

export function isPostgresUrl(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//.test(databaseUrl);
}

/** The response cache (docs/cache.md). */
export interface ResponseCacheSettings {
  enabled: boolean;
  ttl_seconds: number;
  max_entry_bytes: number;
  /** Whose answers a request may read: its team's (its key's without a team), its key's, or everyone's. */
  scope: 'team' | 'key' | 'global';
  endpoints: ReadonlyArray<'chat' | 'completions' | 'responses' | 'messages'>;
  /** Default-unkeyed fields (stream_options, metadata) put back into the hash. */
  extra_key_fields: readonly string[];
  /** Request fields left out of the hash besides the default-unkeyed ones. */
  ignored_key_fields: readonly string[];
}
