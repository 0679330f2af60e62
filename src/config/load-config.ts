/**
 * Loads the configuration: YAML file (or the embedded default), os.environ/ references, LiteLLM aliases,
 * schema validation with path-precise messages, cross-field checks, defaults, deep freeze. Any problem
 * throws a ConfigError listing every issue, before anything starts.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Compile } from 'typebox/compile';
import { Settings } from 'typebox/system';
import { parseDocument, type ScalarTag, type Tags } from 'yaml';
import { deepFreeze } from '../lib/deep-freeze.ts';
import { describeSchemaErrors, formatIssue } from '../lib/schema-errors.ts';
import { type UpstreamUrlPolicy, upstreamUrlProblem } from '../lib/upstream-url-policy.ts';
import type { Config, FallbackMap, McpServerConfig, ModelDeploymentConfig } from './config.ts';
import { ConfigError } from './config-error.ts';
import { type ConfigFile, ConfigFileSchema } from './config-schema.ts';
import { resolveEnvReferences, stringValues } from './env-references.ts';
import { checkInertSettings } from './inert-settings.ts';
import { applyLiteLlmAliases, writtenPath } from './litellm-aliases.ts';
import { responseCacheSettings } from './response-cache-settings.ts';
import { resolveTierModes } from './tier-modes.ts';
import { trustedProxiesProblems } from './trusted-proxies.ts';

export interface LoadConfigOptions {
  /** Path of the YAML file; undefined selects the embedded default. */
  path: string | undefined;
  /** Environment for os.environ/ references. */
  env: Readonly<Record<string, string | undefined>>;
  /** Folder for the embedded default's SQLite file. */
  dataDir: string;
  /**
   * Checks each deployment's params with its provider (given by the composition root, which knows the
   * providers), so provider problems are reported in the same run as schema problems.
   */
  checkDeployment?: (params: Readonly<Record<string, unknown>>, index: number) => { errors: string[] };
}

const validateConfigFile = Compile(ConfigFileSchema);

export const embeddedDefaultYaml = `
model_list:
  - model_name: demo
    params:
      provider: fake
      model: demo
    model_info:
      id: demo-fake
      owned_by: switchboard
  - model_name: demo-embedding
    params:
      provider: fake
      model: demo-embedding
    model_info:
      id: demo-fake-embedding
      owned_by: switchboard
      mode: embedding
`;

export function loadConfig(options: LoadConfigOptions): Config {
  if (options.path === undefined)
    return parseConfig(embeddedDefaultYaml, { ...options, source: 'embedded default' });
  let text: string;
  try {
    text = readFileSync(options.path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : String(error);
    throw new ConfigError(options.path, [`cannot read the configuration file: ${reason}`]);
  }
  return parseConfig(text, { ...options, source: options.path });
}

export function parseConfig(text: string, options: LoadConfigOptions & { source: string }): Config {
  // YAML 1.1 as PyYAML reads it, so LiteLLM files mean the same here: `20_000` is a number, `yes` true.
  const document = parseDocument(text, {
    prettyErrors: true,
    uniqueKeys: true,
    version: '1.1',
    customTags: pyYamlBooleans,
  });
  if (document.errors.length > 0) {
    throw new ConfigError(
      options.source,
      document.errors.map((error) => `YAML: ${error.message.split('\n')[0]}`),
    );
  }
  const raw: unknown = yamlToJs(document, options.source);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(options.source, [
      'the file must hold a mapping with model_list, router_settings …',
    ]);
  }
  // References resolve first, on the keys as written, so that aliases (a Redis URL built from
  // router_settings.redis_password) see values, and a missing variable is named where it was written.
  const { environment_variables: fileEnvironment, ...rest } = raw as Record<string, unknown>;
  const issues: string[] = [];
  const environment = { ...stringValues(fileEnvironment), ...options.env };
  const withValues = resolveEnvReferences(rest, environment, '', issues) as Record<string, unknown>;
  const aliased = applyLiteLlmAliases(withValues);
  issues.push(...aliased.issues);
  const resolved = aliased.config;
  if (!validateConfigFile.Check(resolved)) issues.push(...allSchemaIssues(resolved));
  if (options.checkDeployment) issues.push(...deploymentIssues(resolved, options.checkDeployment));
  const refuse = () =>
    new ConfigError(
      options.source,
      issues.map((issue) => writtenPath(issue, aliased.writtenPaths)),
    );
  if (issues.length > 0) throw refuse();
  const file = resolved as ConfigFile;
  const warnings = aliased.warnings.map((warning) => writtenPath(warning, aliased.writtenPaths));
  const config = buildConfig(file, options, warnings, issues);
  if (issues.length > 0) throw refuse();
  return deepFreeze(config);
}

/**
 * Every schema problem of the file, however many: the schema library stops collecting at `maxErrors`
 * (8, a safeguard for request bodies), which once left a file with 8 unknown keys with no reported
 * problem at all, and it started (issue 10). The cap is lifted for this trusted, one-off check only.
 */
function allSchemaIssues(value: unknown): string[] {
  const settings = Settings.Get();
  const maxErrors = settings.maxErrors;
  Settings.Set({ maxErrors: Number.MAX_SAFE_INTEGER });
  try {
    const described = describeSchemaErrors(ConfigFileSchema, validateConfigFile.Errors(value)).map(
      formatIssue,
    );
    return described.length > 0 ? described : ['the file does not match the configuration schema'];
  } finally {
    Settings.Set({ maxErrors });
  }
}

/**
 * PyYAML's booleans: yes/no, true/false, on/off in their three casings. The YAML 1.1 schema of the
 * `yaml` package also reads `y` and `n` as booleans, which PyYAML (and so LiteLLM) keeps as strings.
 */
function pyYamlBooleans(tags: Tags): Tags {
  return tags.map((tag) => {
    if (typeof tag !== 'object' || tag.tag !== 'tag:yaml.org,2002:bool' || !(tag.test instanceof RegExp))
      return tag;
    const truthy = tag.test.source.includes('[Tt]rue');
    const test = truthy
      ? /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/
      : /^(?:[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/;
    return { ...tag, test } as ScalarTag;
  });
}

/** Provider problems of every deployment whose params are a mapping (schema problems are reported apart). */
function deploymentIssues(
  file: Record<string, unknown>,
  check: NonNullable<LoadConfigOptions['checkDeployment']>,
): string[] {
  if (!Array.isArray(file.model_list)) return [];
  return file.model_list.flatMap((entry, index) => {
    const params = (entry as { params?: unknown } | null)?.params;
    if (params === null || typeof params !== 'object' || Array.isArray(params)) return [];
    return check(params as Record<string, unknown>, index).errors;
  });
}

function buildConfig(
  file: ConfigFile,
  options: LoadConfigOptions & { source: string },
  warnings: string[],
  issues: string[],
): Config {
  const general = file.general_settings ?? {};
  const router = file.router_settings ?? {};
  checkInertSettings(file, warnings);
  if ((file.model_list ?? []).length === 0)
    warnings.push(
      'no model is configured: add model_list entries (see switchboard.example.yaml); /v1 has nothing to serve',
    );
  const modelList = buildModelList(file, issues);
  const urlPolicy: UpstreamUrlPolicy = { allowedHosts: general.upstream_allowed_hosts ?? null };
  checkApiBases(modelList, urlPolicy, issues);
  if ((general.max_upload_bytes ?? Infinity) < (general.max_request_body_bytes ?? 10 * 1024 * 1024))
    issues.push('general_settings.max_upload_bytes: must be at least max_request_body_bytes');
  if ((general.max_upload_spool_bytes ?? Infinity) < maxUploadBytes(general))
    issues.push('general_settings.max_upload_spool_bytes: must be at least max_upload_bytes');
  issues.push(...trustedProxiesProblems(general.trusted_proxies ?? [], 'general_settings.trusted_proxies'));
  const store = general.batch_file_store;
  if (store !== undefined && store !== 'database' && !isAbsolute(store))
    issues.push(`general_settings.batch_file_store: must be 'database' or an absolute directory path`);
  const spill = general.spend_spill_dir;
  if (spill !== undefined && (!isAbsolute(spill) || spill.includes('\0')))
    issues.push('general_settings.spend_spill_dir: must be an absolute directory path');
  const tierModes = resolveTierModes(general, options.env, issues);
  const groups = new Set(modelList.map((model) => model.model_name));
  const fallbacks = buildFallbacks(router.fallbacks, 'router_settings.fallbacks', groups, issues);
  const contextFallbacks = buildFallbacks(
    router.context_window_fallbacks,
    'router_settings.context_window_fallbacks',
    groups,
    issues,
  );
  return {
    source: options.source,
    warnings,
    model_list: modelList,
    router_settings: {
      routing_strategy: router.routing_strategy ?? 'simple-shuffle',
      routing_strategy_args: {
        lowest_latency_buffer: router.routing_strategy_args?.lowest_latency_buffer ?? 0,
        ttl: router.routing_strategy_args?.ttl ?? 3600,
      },
      num_retries: router.num_retries ?? 2,
      retry_after: router.retry_after ?? 0,
      allowed_fails: router.allowed_fails ?? 3,
      cooldown_time: router.cooldown_time ?? 5,
      timeout: router.timeout ?? 600,
      stream_timeout: router.stream_timeout ?? router.timeout ?? 600,
      connect_timeout: router.connect_timeout ?? 10,
      pool_timeout: router.pool_timeout ?? 10,
      max_connections_per_deployment: router.max_connections_per_deployment ?? 256,
      fallbacks,
      context_window_fallbacks: contextFallbacks,
      enable_pre_call_checks: router.enable_pre_call_checks ?? false,
    },
    general_settings: {
      master_key: general.master_key,
      salt_key: general.salt_key,
      database_url: general.database_url ?? join(options.dataDir, 'switchboard.db'),
      database_pool_size: general.database_pool_size ?? 10,
      redis_url: general.redis_url,
      redis_degraded_mode: general.redis_degraded_mode ?? 'fail_open',
      // Measured: a loaded 2-core machine sees admission answers up to ~0.6 s (docs/limits.md).
      redis_command_timeout_ms: general.redis_command_timeout_ms ?? 1000,
      redis_key_prefix: general.redis_key_prefix ?? 'switchboard:',
      spend_ingestion_mode: general.spend_ingestion_mode ?? 'legacy',
      response_cache: responseCacheSettings(general.response_cache, issues, warnings),
      telemetry_database_url:
        general.telemetry_database_url ?? general.database_url ?? join(options.dataDir, 'switchboard.db'),
      spend_finalization_timeout_ms: general.spend_finalization_timeout_ms ?? 5_000,
      embeddings_batch_enabled: general.embeddings_batch_enabled ?? false,
      batch_file_store: general.batch_file_store ?? 'database',
      // OpenAI's limit of a batch input file.
      batch_file_max_bytes: general.batch_file_max_bytes ?? 200 * 1024 * 1024,
      batch_lease_seconds: general.batch_lease_seconds ?? 120,
      cache_invalidation_worker_enabled: general.cache_invalidation_worker_enabled ?? true,
      tier_policy_mode: tierModes.tier_policy_mode,
      tier_policy_missing_service_mode: tierModes.tier_policy_missing_service_mode,
      auth_cache_ttl_seconds: general.auth_cache_ttl_seconds ?? 60,
      max_request_body_bytes: general.max_request_body_bytes ?? 10 * 1024 * 1024,
      max_upload_bytes: maxUploadBytes(general),
      // Room for forty uploads of OpenAI's size at once; never below one upload.
      max_upload_spool_bytes: general.max_upload_spool_bytes ?? Math.max(1024 ** 3, maxUploadBytes(general)),
      request_timeout_seconds: general.request_timeout_seconds ?? 600,
      body_read_timeout_seconds: general.body_read_timeout_seconds ?? 30,
      shutdown_grace_seconds: general.shutdown_grace_seconds ?? 30,
      shutdown_pre_stop_seconds: general.shutdown_pre_stop_seconds ?? 0,
      request_logging: general.request_logging ?? true,
      console_enabled: general.console_enabled ?? true,
      mcp_tool_loop_max_iterations: general.mcp_tool_loop_max_iterations ?? 10,
      mcp_catalog_refresh_interval_seconds: general.mcp_catalog_refresh_interval_seconds ?? 300,
      mcp_connections_per_key: general.mcp_connections_per_key ?? 8,
      budget_reconcile_interval_seconds: general.budget_reconcile_interval_seconds ?? 60,
      budget_reservation_default_max_tokens: general.budget_reservation_default_max_tokens ?? 4096,
      mcp_allowed_hosts: general.mcp_allowed_hosts ?? ['localhost', '127.0.0.1', '[::1]'],
      upstream_allowed_hosts: urlPolicy.allowedHosts,
      audit_retention_days: general.audit_retention_days === undefined ? 365 : general.audit_retention_days,
      trusted_proxies: general.trusted_proxies ?? [],
      // Three bodies of the default 10 MiB limit at once; a larger body is admitted alone.
      max_concurrent_body_bytes_per_key: general.max_concurrent_body_bytes_per_key ?? 32 * 1024 * 1024,
      database_statement_timeout_ms: general.database_statement_timeout_ms ?? 30_000,
      database_migration_lock_timeout_ms: general.database_migration_lock_timeout_ms ?? 10_000,
      spend_spill_dir: general.spend_spill_dir ?? join(options.dataDir, 'spend-spill'),
      allow_requests_on_db_unavailable: general.allow_requests_on_db_unavailable ?? false,
      auth_cache_max_stale_seconds: general.auth_cache_max_stale_seconds ?? 3_600,
    },
    mcp_servers: buildMcpServers(file.mcp_servers ?? [], urlPolicy, issues),
    tier_mode_sources: tierModes.sources,
  };
}

/** OpenAI's own upload limit; never below the JSON body limit (an upload is the larger request). */
function maxUploadBytes(general: NonNullable<ConfigFile['general_settings']>): number {
  return general.max_upload_bytes ?? Math.max(25 * 1024 * 1024, general.max_request_body_bytes ?? 0);
}

/** Provider api_base values must pass the upstream URL policy (no credentials, no metadata address). */
function checkApiBases(
  models: readonly ModelDeploymentConfig[],
  policy: UpstreamUrlPolicy,
  issues: string[],
) {
  models.forEach((model, index) => {
    const apiBase = model.params.api_base;
    const problem = apiBase === undefined ? undefined : upstreamUrlProblem(apiBase, policy);
    if (problem) issues.push(`model_list[${index}].params.api_base: ${problem}`);
  });
}

function buildModelList(file: ConfigFile, issues: string[]): ModelDeploymentConfig[] {
  const ids = new Map<string, number>();
  return (file.model_list ?? []).map((entry, index) => {
    const params = entry.params as ModelDeploymentConfig['params'];
    const explicitId = entry.model_info?.id;
    let id = explicitId ?? stableDeploymentId(entry.model_name, params);
    if (ids.has(id)) {
      if (explicitId !== undefined) {
        issues.push(
          `model_list[${index}].model_info.id: '${id}' is already used by model_list[${ids.get(id)}]`,
        );
      } else {
        let suffix = 2;
        while (ids.has(`${id}-${suffix}`)) suffix++;
        id = `${id}-${suffix}`;
      }
    }
    ids.set(id, index);
    return { model_name: entry.model_name, params, model_info: { ...entry.model_info, id } };
  });
}

/** A deployment id that survives restarts and key rotation, and reveals neither URL nor key. */
function stableDeploymentId(modelName: string, params: ModelDeploymentConfig['params']): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([modelName, params.provider, params.model, params.api_base ?? '']))
    .digest('hex');
  return `${modelName.replace(/[^a-zA-Z0-9_.-]/g, '-')}-${digest.slice(0, 10)}`;
}

function buildFallbacks(
  list: ReadonlyArray<Record<string, string[]>> | undefined,
  path: string,
  groups: ReadonlySet<string>,
  issues: string[],
): FallbackMap {
  const map: Record<string, string[]> = {};
  (list ?? []).forEach((entry, index) => {
    for (const [group, targets] of Object.entries(entry)) {
      if (!groups.has(group))
        issues.push(`${path}[${index}].${group}: no model_list entry has model_name '${group}'`);
      targets.forEach((target, targetIndex) => {
        if (!groups.has(target)) {
          issues.push(
            `${path}[${index}].${group}[${targetIndex}]: no model_list entry has model_name '${target}'`,
          );
        }
      });
      map[group] = [...(map[group] ?? []), ...targets.filter((target) => target !== group)];
    }
  });
  return map;
}

function buildMcpServers(
  servers: NonNullable<ConfigFile['mcp_servers']>,
  urlPolicy: UpstreamUrlPolicy,
  issues: string[],
): McpServerConfig[] {
  const seen = new Set<string>();
  return servers.map((server, index) => {
    if (seen.has(server.server_key)) {
      issues.push(`mcp_servers[${index}].server_key: '${server.server_key}' is used twice`);
    }
    seen.add(server.server_key);
    const urlProblem = upstreamUrlProblem(server.base_url, urlPolicy);
    if (urlProblem) issues.push(`mcp_servers[${index}].base_url: ${urlProblem}`);
    const authMode = server.auth_mode ?? (server.auth_config?.token ? 'bearer' : 'none');
    if (authMode === 'bearer' && !server.auth_config?.token) {
      issues.push(`mcp_servers[${index}].auth_config.token: is required when auth_mode is bearer`);
    }
    return {
      server_key: server.server_key,
      name: server.name ?? server.server_key,
      transport: 'streamable_http',
      base_url: server.base_url,
      enabled: server.enabled ?? true,
      auth_mode: authMode,
      auth_config: { ...server.auth_config },
      forwarded_headers_allowlist: server.forwarded_headers_allowlist ?? [],
      request_timeout_ms: server.request_timeout_ms ?? 30_000,
    };
  });
}

/**
 * The document as values. Building them can still fail after a clean parse (an alias whose anchor is
 * missing, too many alias expansions): the yaml library throws a ReferenceError, which would escape as
 * a crash instead of a configuration error (found by the config fuzz test, issue 18).
 */
function yamlToJs(document: ReturnType<typeof parseDocument>, source: string): unknown {
  try {
    return document.toJS() ?? {};
  } catch (error) {
    throw new ConfigError(source, [`YAML: ${(error as Error).message.split('\n')[0]}`]);
  }
}
