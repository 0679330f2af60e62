/**
 * Rewrites LiteLLM spellings into Switchboard's so that LiteLLM configs load unchanged: `litellm_params`,
 * provider-prefixed model names, `rpm`/`tpm` on a deployment, `degraded_mode`, redis host/port/password,
 * the map form of `mcp_servers`, and LiteLLM-only settings that are accepted with a warning.
 */
type Json = Record<string, unknown>;

/** LiteLLM settings Switchboard accepts and ignores, with a warning, so such configs still load. */
const ignoredKeys: Readonly<Record<string, readonly string[]>> = {
  '': ['litellm_settings', 'callback_settings', 'credential_list'],
  general_settings: [
    'alerting',
    'alerting_threshold',
    'alert_types',
    'allow_requests_on_db_unavailable',
    'background_health_checks',
    'custom_auth',
    'disable_master_key_return',
    'disable_retry_on_max_parallel_request_limit_error',
    'disable_spend_logs',
    'enforce_user_param',
    'global_max_parallel_requests',
    'health_check_interval',
    'infer_model_from_keys',
    'maximum_spend_logs_retention_period',
    'proxy_batch_write_at',
    'public_routes',
    'store_model_in_db',
    'ui_access_mode',
  ],
  router_settings: [
    'allowed_fails_policy',
    'cache_responses',
    'debug_level',
    'default_litellm_params',
    'model_group_alias',
    'retry_policy',
    'set_verbose',
  ],
};

export interface AliasResult {
  config: Json;
  warnings: string[];
  issues: string[];
  /** `environment_variables` from a LiteLLM config, usable by os.environ/ references. */
  environment: Record<string, string>;
}

export function applyLiteLlmAliases(input: Json): AliasResult {
  const config: Json = { ...input };
  const warnings: string[] = [];
  const issues: string[] = [];
  const environment: Record<string, string> = {};

  if (isObject(config.environment_variables)) {
    for (const [name, value] of Object.entries(config.environment_variables))
      environment[name] = String(value);
    delete config.environment_variables;
  }
  dropIgnored(config, '', warnings);

  const general: Json = isObject(config.general_settings) ? { ...config.general_settings } : {};
  const router: Json = isObject(config.router_settings) ? { ...config.router_settings } : {};
  renameKey(general, 'degraded_mode', 'redis_degraded_mode', 'general_settings', issues);
  renameKey(general, 'database_connection_pool_limit', 'database_pool_size', 'general_settings', issues);
  moveRedisHost(router, general);
  dropIgnored(general, 'general_settings', warnings);
  dropIgnored(router, 'router_settings', warnings);
  if (isObject(config.general_settings) || Object.keys(general).length) config.general_settings = general;
  if (isObject(config.router_settings) || Object.keys(router).length) config.router_settings = router;

  if (Array.isArray(config.model_list)) {
    config.model_list = config.model_list.map((entry, index) =>
      isObject(entry) ? normalizeModelEntry(entry, `model_list[${index}]`, issues) : entry,
    );
  }
  if (isObject(config.mcp_servers)) {
    config.mcp_servers = Object.entries(config.mcp_servers).map(([serverKey, server]) =>
      isObject(server) ? { server_key: serverKey, ...server } : server,
    );
  }
  if (Array.isArray(config.mcp_servers)) {
    config.mcp_servers = config.mcp_servers.map((server, index) => {
      if (!isObject(server)) return server;
      const copy = { ...server };
      renameKey(copy, 'url', 'base_url', `mcp_servers[${index}]`, issues);
      return copy;
    });
  }
  return { config, warnings, issues, environment };
}

function normalizeModelEntry(entry: Json, path: string, issues: string[]): Json {
  const copy = { ...entry };
  renameKey(copy, 'litellm_params', 'params', path, issues);
  if (!isObject(copy.params)) return copy;
  const params: Json = { ...copy.params };
  if (params.provider === undefined && typeof params.model === 'string') {
    const slash = params.model.indexOf('/');
    if (slash > 0) {
      params.provider = params.model.slice(0, slash);
      params.model = params.model.slice(slash + 1);
    } else {
      params.provider = 'openai';
    }
  }
  const info: Json = isObject(copy.model_info) ? { ...copy.model_info } : {};
  for (const [alias, target] of [
    ['rpm', 'rpm_limit'],
    ['tpm', 'tpm_limit'],
  ] as const) {
    if (params[alias] !== undefined && info[target] === undefined) info[target] = params[alias];
    delete params[alias];
  }
  copy.params = params;
  if (Object.keys(info).length || copy.model_info !== undefined) copy.model_info = info;
  return copy;
}

function moveRedisHost(router: Json, general: Json): void {
  const host = router.redis_host;
  const port = router.redis_port;
  const password = router.redis_password;
  delete router.redis_host;
  delete router.redis_port;
  delete router.redis_password;
  if (general.redis_url !== undefined || typeof host !== 'string') return;
  const auth = typeof password === 'string' && password ? `:${encodeURIComponent(password)}@` : '';
  general.redis_url = `redis://${auth}${host}:${port ?? 6379}`;
}

function renameKey(record: Json, from: string, to: string, path: string, issues: string[]): void {
  if (record[from] === undefined) return;
  if (record[to] !== undefined) {
    issues.push(`${path ? `${path}.` : ''}${from}: is an alias of ${to}; set only one of them`);
    return;
  }
  record[to] = record[from];
  delete record[from];
}

function dropIgnored(record: Json, section: string, warnings: string[]): void {
  for (const key of ignoredKeys[section] ?? []) {
    if (record[key] === undefined) continue;
    delete record[key];
    warnings.push(`${section ? `${section}.` : ''}${key} is a LiteLLM setting Switchboard ignores`);
  }
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
