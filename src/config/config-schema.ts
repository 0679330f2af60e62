/**
 * The configuration file's schema: one TypeBox definition gives the validation, the static types and the
 * reference in docs/configuration.md. Keys follow the spec (and LiteLLM, whose configs load unchanged).
 */
import Type, { type Static } from 'typebox';

const PositiveInteger = Type.Integer({ minimum: 1 });
const NonNegativeInteger = Type.Integer({ minimum: 0 });
const Seconds = Type.Number({ exclusiveMinimum: 0 });
const Price = Type.Number({ minimum: 0 });

export const routingStrategies = [
  'simple-shuffle',
  'least-busy',
  'latency-based-routing',
  'usage-based-routing',
  'usage-based-routing-v2',
  'RateLimitAwareStrategy',
] as const;

export const ModelParamsSchema = Type.Object(
  {
    provider: Type.Optional(Type.String({ minLength: 1 })),
    model: Type.String({ minLength: 1 }),
    api_base: Type.Optional(Type.String({ format: 'uri' })),
    api_key: Type.Optional(Type.String()),
    timeout: Type.Optional(Seconds),
    stream_timeout: Type.Optional(Seconds),
    connect_timeout: Type.Optional(Seconds),
    weight: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    max_connections: Type.Optional(PositiveInteger),
    rpm: Type.Optional(NonNegativeInteger),
    tpm: Type.Optional(NonNegativeInteger),
  },
  // Provider-specific fields (api_version, organization, headers, fake's latency …) are validated by
  // the provider adapter's own schema when the registry is built.
  { additionalProperties: true },
);

export const ModelInfoSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1 })),
    rpm_limit: Type.Optional(NonNegativeInteger),
    tpm_limit: Type.Optional(NonNegativeInteger),
    // LiteLLM's modes. chat, completion and responses groups serve the text endpoints; embedding,
    // image_generation, audio_speech, audio_transcription and rerank groups serve their own endpoint
    // (a provider without that capability is refused at start); the other modes are only listed in
    // /v1/models. A request on another mode's endpoint is a 400 naming the group's endpoint.
    mode: Type.Optional(
      Type.Enum([
        'chat',
        'completion',
        'responses',
        'embedding',
        'image_generation',
        'image_edit',
        'audio_speech',
        'audio_transcription',
        'rerank',
        'moderation',
        'batch',
        'realtime',
        'ocr',
        'search',
        'video_generation',
      ]),
    ),
    // Prices in USD per unit under LiteLLM's names; each overrides the bundled price table (accounting/).
    input_cost_per_token: Type.Optional(Price),
    output_cost_per_token: Type.Optional(Price),
    cache_read_input_token_cost: Type.Optional(Price),
    cache_creation_input_token_cost: Type.Optional(Price),
    output_cost_per_reasoning_token: Type.Optional(Price),
    input_cost_per_audio_token: Type.Optional(Price),
    output_cost_per_audio_token: Type.Optional(Price),
    output_cost_per_image: Type.Optional(Price),
    input_cost_per_second: Type.Optional(Price),
    input_cost_per_query: Type.Optional(Price),
    input_cost_per_character: Type.Optional(Price),
    // The model whose table price applies (LiteLLM's convention for Azure deployment names).
    base_model: Type.Optional(Type.String({ minLength: 1 })),
    max_input_tokens: Type.Optional(PositiveInteger),
    owned_by: Type.Optional(Type.String()),
    // Request values the deployment supplies when the caller leaves them out: a speech provider's voice.
    default_params: Type.Optional(
      Type.Object(
        {
          // It goes into the provider's URL path: only a plain id may pass (ElevenLabs' are letters and digits).
          voice_id: Type.Optional(
            Type.String({
              pattern: '^[A-Za-z0-9_-]{1,64}$',
              description: 'must be a voice id: 1-64 letters, digits, _ or -',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  // model_info is descriptive metadata; LiteLLM configs carry many more keys (supports_vision …).
  { additionalProperties: true },
);

export const ModelEntrySchema = Type.Object(
  {
    model_name: Type.String({ minLength: 1 }),
    params: ModelParamsSchema,
    model_info: Type.Optional(ModelInfoSchema),
  },
  { additionalProperties: false },
);

const FallbackList = Type.Array(Type.Record(Type.String(), Type.Array(Type.String({ minLength: 1 }))));

export const RouterSettingsSchema = Type.Object(
  {
    routing_strategy: Type.Optional(Type.Enum([...routingStrategies])),
    routing_strategy_args: Type.Optional(
      Type.Object(
        {
          lowest_latency_buffer: Type.Optional(Type.Number({ minimum: 0 })),
          ttl: Type.Optional(Seconds),
        },
        { additionalProperties: false },
      ),
    ),
    num_retries: Type.Optional(NonNegativeInteger),
    retry_after: Type.Optional(Type.Number({ minimum: 0 })),
    allowed_fails: Type.Optional(NonNegativeInteger),
    cooldown_time: Type.Optional(Type.Number({ minimum: 0 })),
    timeout: Type.Optional(Seconds),
    stream_timeout: Type.Optional(Seconds),
    connect_timeout: Type.Optional(Seconds),
    pool_timeout: Type.Optional(Seconds),
    max_connections_per_deployment: Type.Optional(PositiveInteger),
    fallbacks: Type.Optional(FallbackList),
    context_window_fallbacks: Type.Optional(FallbackList),
    enable_pre_call_checks: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const ResponseCacheSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    ttl_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 2_592_000 })),
    max_entry_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 67_108_864 })),
    scope: Type.Optional(Type.Enum(['team', 'key', 'global'])),
    endpoints: Type.Optional(Type.Array(Type.Enum(['chat', 'completions', 'responses', 'messages']))),
    extra_key_fields: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }))),
    // Any request field (cache version 7 hashes every field; config/response-cache-settings.ts checks them).
    ignored_key_fields: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }))),
  },
  { additionalProperties: false },
);

export const GeneralSettingsSchema = Type.Object(
  {
    // Its length rule depends on the listen address, so the CLI applies it (identity/master-key-rule.ts).
    master_key: Type.Optional(Type.String({ minLength: 1 })),
    salt_key: Type.Optional(Type.String({ minLength: 16 })),
    database_url: Type.Optional(Type.String({ minLength: 1 })),
    database_pool_size: Type.Optional(PositiveInteger),
    redis_url: Type.Optional(
      Type.String({ pattern: '^rediss?://', description: 'must be a redis:// or rediss:// URL' }),
    ),
    redis_degraded_mode: Type.Optional(Type.Enum(['fail_open', 'fail_closed'])),
    redis_command_timeout_ms: Type.Optional(PositiveInteger),
    redis_key_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    spend_ingestion_mode: Type.Optional(Type.Enum(['legacy', 'outbox'])),
    telemetry_database_url: Type.Optional(Type.String({ minLength: 1 })),
    spend_finalization_timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
    embeddings_batch_enabled: Type.Optional(Type.Boolean()),
    batch_file_store: Type.Optional(Type.String({ minLength: 1 })),
    batch_file_max_bytes: Type.Optional(PositiveInteger),
    batch_lease_seconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 3_600 })),
    cache_invalidation_worker_enabled: Type.Optional(Type.Boolean()),
    tier_policy_mode: Type.Optional(Type.Enum(['off', 'shadow', 'enforce'])),
    tier_policy_missing_service_mode: Type.Optional(Type.Enum(['fail_open', 'fail_closed'])),
    auth_cache_ttl_seconds: Type.Optional(Seconds),
    max_request_body_bytes: Type.Optional(PositiveInteger),
    max_upload_bytes: Type.Optional(PositiveInteger),
    max_upload_spool_bytes: Type.Optional(PositiveInteger),
    request_timeout_seconds: Type.Optional(Seconds),
    body_read_timeout_seconds: Type.Optional(Seconds),
    shutdown_grace_seconds: Type.Optional(Type.Number({ minimum: 0 })),
    shutdown_pre_stop_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 600 })),
    request_logging: Type.Optional(Type.Boolean()),
    console_enabled: Type.Optional(Type.Boolean()),
    mcp_tool_loop_max_iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    mcp_catalog_refresh_interval_seconds: Type.Optional(Type.Number({ minimum: 0 })),
    // Each API key's share of an MCP server's 32 pooled connections per process (issue 25).
    mcp_connections_per_key: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
    budget_reconcile_interval_seconds: Type.Optional(Type.Number({ minimum: 0 })),
    budget_reservation_default_max_tokens: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
    mcp_allowed_hosts: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    upstream_allowed_hosts: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    response_cache: Type.Optional(ResponseCacheSchema),
    audit_retention_days: Type.Optional(Type.Union([PositiveInteger, Type.Null()])),
    // HTTP edge (issue 25): whose X-Forwarded-For is believed; each key's request-body bytes at once.
    trusted_proxies: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 256 }),
    ),
    max_concurrent_body_bytes_per_key: Type.Optional(PositiveInteger),
    // Database deadlines and serving through a database outage (docs/operations.md, issue 31).
    database_statement_timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
    database_migration_lock_timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    spend_spill_dir: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    allow_requests_on_db_unavailable: Type.Optional(Type.Boolean()),
    auth_cache_max_stale_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 604_800 })),
  },
  { additionalProperties: false },
);

export const McpServerSchema = Type.Object(
  {
    server_key: Type.String({
      pattern: '^[a-zA-Z0-9_-]{1,64}$',
      description: 'must be 1-64 letters, digits, _ or -',
    }),
    name: Type.Optional(Type.String({ minLength: 1 })),
    transport: Type.Optional(Type.Enum(['streamable_http', 'http'])),
    base_url: Type.String({ format: 'uri' }),
    enabled: Type.Optional(Type.Boolean()),
    auth_mode: Type.Optional(Type.Enum(['none', 'bearer'])),
    auth_config: Type.Optional(
      Type.Object({ token: Type.Optional(Type.String()) }, { additionalProperties: false }),
    ),
    forwarded_headers_allowlist: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    request_timeout_ms: Type.Optional(PositiveInteger),
  },
  { additionalProperties: false },
);

export const ConfigFileSchema = Type.Object(
  {
    model_list: Type.Optional(Type.Array(ModelEntrySchema)),
    router_settings: Type.Optional(RouterSettingsSchema),
    general_settings: Type.Optional(GeneralSettingsSchema),
    mcp_servers: Type.Optional(Type.Array(McpServerSchema)),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFileSchema>;
export type ModelEntryInput = Static<typeof ModelEntrySchema>;
export type McpServerInput = Static<typeof McpServerSchema>;
export type RoutingStrategyName = (typeof routingStrategies)[number];
