/**
 * Rewrites LiteLLM spellings into Switchboard's so that LiteLLM configs load unchanged: `litellm_params`,
 * provider-prefixed model names, `rpm`/`tpm` on a deployment (in or next to `litellm_params`),
 * `credential_list` references, `litellm_settings` twins of router settings, `degraded_mode`, redis
 * host/port/password, the map form of `mcp_servers`, and LiteLLM-only settings that are accepted with a
 * warning giving the reason (litellm-keys.ts). It remembers where each rewritten value was written, so
 * errors name the key the user wrote (`model_list[0].litellm_params.tpm`), not the internal one.
 */
import { closestMatch } from '../lib/closest-match.ts';
import { litellmKeys } from './litellm-keys.ts';

type Json = Record<string, unknown>;

export interface AliasResult {
  config: Json;
  warnings: string[];
  issues: string[];
  /** Internal path prefix → the path the user wrote, for naming problems (longest first). */
  writtenPaths: Array<readonly [internal: string, written: string]>;
}

export function applyLiteLlmAliases(input: Json): AliasResult {
  const config: Json = { ...input };
  const warnings: string[] = [];
  const issues: string[] = [];
  const writtenPaths: Array<readonly [string, string]> = [];

  if (config.include !== undefined) {
    issues.push('include: is not supported; put the included model_list entries in this file');
    delete config.include;
  }
  const credentials = credentialValues(config.credential_list, issues);
  delete config.credential_list;
  dropIgnored(config, '', warnings);

  const general: Json = isObject(config.general_settings) ? { ...config.general_settings } : {};
  const router: Json = isObject(config.router_settings) ? { ...config.router_settings } : {};
  applyLiteLlmSettings(config.litellm_settings, { router, general }, warnings, issues);
  delete config.litellm_settings;
  renameKey(general, 'degraded_mode', 'redis_degraded_mode', 'general_settings', issues);
  renameKey(general, 'database_connection_pool_limit', 'database_pool_size', 'general_settings', issues);
  moveRedisHost(router, general);
  dropIgnored(general, 'general_settings', warnings);
  dropIgnored(router, 'router_settings', warnings);
  if (isObject(config.general_settings) || Object.keys(general).length) config.general_settings = general;
  if (isObject(config.router_settings) || Object.keys(router).length) config.router_settings = router;

  if (Array.isArray(config.model_list)) {
    config.model_list = config.model_list.map((entry, index) =>
      isObject(entry)
        ? normalizeModelEntry(entry, `model_list[${index}]`, { issues, writtenPaths, credentials })
        : entry,
    );
  }
  if (isObject(config.mcp_servers)) {
    config.mcp_servers = Object.entries(config.mcp_servers).map(([serverKey, server], index) => {
      writtenPaths.push([`mcp_servers[${index}]`, `mcp_servers.${serverKey}`]);
      return isObject(server) ? { server_key: serverKey, ...server } : server;
    });
  }
  if (Array.isArray(config.mcp_servers)) {
    config.mcp_servers = config.mcp_servers.map((server, index) => {
      if (!isObject(server)) return server;
      const copy = { ...server };
      if (copy.url !== undefined && copy.base_url === undefined)
        writtenPaths.push([`mcp_servers[${index}].base_url`, `mcp_servers[${index}].url`]);
      renameKey(copy, 'url', 'base_url', `mcp_servers[${index}]`, issues);
      normalizeMcpServer(copy, `mcp_servers[${index}]`, warnings, issues);
      return copy;
    });
  }
  writtenPaths.sort((a, b) => b[0].length - a[0].length);
  return { config, warnings, issues, writtenPaths };
}

/** Names a problem by the path the user wrote (a renamed key inside a renamed entry maps twice). */
export function writtenPath(issue: string, writtenPaths: AliasResult['writtenPaths']): string {
  let named = issue;
  for (const [internal, written] of writtenPaths) {
    const next = named.charAt(internal.length);
    if (named.startsWith(internal) && (next === '' || next === '.' || next === ':' || next === '['))
      named = written + named.slice(internal.length);
  }
  return named;
}

/** LiteLLM's MCP server fields: auth_type maps to auth_mode; description and spec_version warn. */
function normalizeMcpServer(server: Json, path: string, warnings: string[], issues: string[]): void {
  for (const key of ['description', 'spec_version'] as const) {
    if (server[key] === undefined) continue;
    delete server[key];
    warnings.push(
      `${path}.${key} is not used: ${key === 'description' ? 'tools carry their own descriptions' : 'the MCP protocol version is negotiated at initialize'}`,
    );
  }
  if (server.auth_type !== undefined) {
    const mode =
      server.auth_type === 'bearer_token' ? 'bearer' : server.auth_type === 'none' ? 'none' : undefined;
    if (mode === undefined)
      issues.push(
        `${path}.auth_type: '${String(server.auth_type)}' is not supported; use none or bearer_token (with auth_config.token)`,
      );
    else if (server.auth_mode === undefined) server.auth_mode = mode;
    delete server.auth_type;
  }
  if (typeof server.base_url === 'string' && /\/sse\/?$/.test(server.base_url)) {
    warnings.push(
      `${path}.url ends in /sse: the legacy SSE transport is not supported; point it at the server's Streamable HTTP endpoint (often /mcp)`,
    );
  }
}

/** `litellm_settings`: twins of router settings move there (router_settings wins); the rest warn or fail. */
function applyLiteLlmSettings(
  settings: unknown,
  targets: { router: Json; general: Json },
  warnings: string[],
  issues: string[],
): void {
  const { router } = targets;
  if (settings === undefined || settings === null) return;
  if (!isObject(settings)) {
    issues.push('litellm_settings: must be a mapping');
    return;
  }
  const known = litellmKeys.litellm_settings!;
  for (const [key, value] of Object.entries(settings)) {
    const treatment = known[key];
    if (!treatment) {
      const suggestion = closestMatch(key, Object.keys(known));
      issues.push(
        `litellm_settings.${key}: unknown key${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`,
      );
    } else if (treatment.use === 'ignored') {
      warnings.push(`litellm_settings.${key} is a LiteLLM setting Switchboard ignores: ${treatment.reason}`);
    } else if (key === 'cache' || key === 'cache_params') {
      applyCacheSetting(key, value, targets.general, warnings);
    } else {
      const target = treatment.to.replace('router_settings.', '');
      if (router[target] !== undefined) {
        warnings.push(
          `litellm_settings.${key} is also set as router_settings.${target}; router_settings wins`,
        );
      } else {
        router[target] = value;
      }
    }
  }
}

/**
 * LiteLLM's `cache: true` and `cache_params.ttl` turn on the response cache (general_settings wins);
 * its other cache_params (type, host, namespace …) have no counterpart: the cache lives in
 * general_settings.redis_url when set, else in process.
 */
function applyCacheSetting(key: string, value: unknown, general: Json, warnings: string[]): void {
  const cache: Json = isObject(general.response_cache) ? { ...general.response_cache } : {};
  if (key === 'cache') {
    if (cache.enabled === undefined && typeof value === 'boolean') cache.enabled = value;
  } else if (isObject(value)) {
    for (const [param, setting] of Object.entries(value)) {
      if (param === 'ttl' && cache.ttl_seconds === undefined) cache.ttl_seconds = setting;
      else if (param !== 'ttl')
        warnings.push(
          `litellm_settings.cache_params.${param} is a LiteLLM setting Switchboard ignores: the response cache uses general_settings.redis_url when set, else an in-process cache`,
        );
    }
  }
  general.response_cache = cache;
}

/** `credential_list` entries by name: their `credential_values` fill in deployments that reference them. */
function credentialValues(list: unknown, issues: string[]): Map<string, Json> {
  const byName = new Map<string, Json>();
  if (list === undefined) return byName;
  if (!Array.isArray(list)) {
    issues.push('credential_list: must be a list of {credential_name, credential_values}');
    return byName;
  }
  list.forEach((entry, index) => {
    if (!isObject(entry) || typeof entry.credential_name !== 'string' || !isObject(entry.credential_values)) {
      issues.push(
        `credential_list[${index}]: needs credential_name (a string) and credential_values (a mapping)`,
      );
      return;
    }
    byName.set(entry.credential_name, entry.credential_values);
  });
  return byName;
}

function normalizeModelEntry(
  entry: Json,
  path: string,
  context: {
    issues: string[];
    writtenPaths: Array<readonly [string, string]>;
    credentials: Map<string, Json>;
  },
): Json {
  const { issues, writtenPaths, credentials } = context;
  const copy = { ...entry };
  const paramsKey =
    copy.litellm_params !== undefined && copy.params === undefined ? 'litellm_params' : 'params';
  if (paramsKey === 'litellm_params') writtenPaths.push([`${path}.params`, `${path}.litellm_params`]);
  renameKey(copy, 'litellm_params', 'params', path, issues);
  if (!isObject(copy.params)) return copy;
  let params: Json = { ...copy.params };
  const credentialName = params.litellm_credential_name;
  if (credentialName !== undefined) {
    delete params.litellm_credential_name;
    const values = typeof credentialName === 'string' ? credentials.get(credentialName) : undefined;
    if (values) params = { ...values, ...params };
    else
      issues.push(
        `${path}.${paramsKey}.litellm_credential_name: no credential_list entry is named '${String(credentialName)}'`,
      );
  }
  // LiteLLM names a Bedrock endpoint override aws_bedrock_runtime_endpoint; it is our api_base.
  if (params.aws_bedrock_runtime_endpoint !== undefined) {
    writtenPaths.push([`${path}.params.api_base`, `${path}.${paramsKey}.aws_bedrock_runtime_endpoint`]);
    renameKey(params, 'aws_bedrock_runtime_endpoint', 'api_base', `${path}.${paramsKey}`, issues);
  }
  // The fake provider needs no upstream model name: it defaults to the group's name.
  if (params.provider === 'fake' && params.model === undefined && typeof copy.model_name === 'string')
    params.model = copy.model_name;
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
    // LiteLLM reads rpm/tpm inside litellm_params and next to it.
    for (const [source, written] of [
      [params, `${path}.${paramsKey}.${alias}`],
      [copy, `${path}.${alias}`],
    ] as const) {
      if (source[alias] === undefined) continue;
      if (info[target] === undefined) {
        info[target] = source[alias];
        writtenPaths.push([`${path}.model_info.${target}`, written]);
      }
      delete source[alias];
    }
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

/** LiteLLM settings Switchboard has no use for: dropped with a warning that says why. */
function dropIgnored(record: Json, section: string, warnings: string[]): void {
  for (const [key, treatment] of Object.entries(litellmKeys[section] ?? {})) {
    if (record[key] === undefined || treatment.use !== 'ignored') continue;
    delete record[key];
    warnings.push(
      `${section ? `${section}.` : ''}${key} is a LiteLLM setting Switchboard ignores: ${treatment.reason}`,
    );
  }
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
