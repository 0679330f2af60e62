/**
 * The admin settings API's view of the configuration (GET/PATCH /ui/api/settings). Every setting is
 * read at start: none can change while the gateway runs, so a PATCH that would change one is refused
 * by name with 409 restart_required (spec Versioning 6 asks it for the tier-policy modes; the rest are
 * start-up only too). A PATCH that changes nothing is accepted, and a refused one changes nothing.
 * Secrets and connection URLs are neither shown nor compared (a comparison would reveal them).
 */
import { Compile } from 'typebox/compile';
import { errors } from '../lib/error-catalogue.ts';
import type { GatewayError } from '../lib/gateway-error.ts';
import type { Config } from './config.ts';
import { GeneralSettingsSchema, RouterSettingsSchema } from './config-schema.ts';
import { trustedProxyProblem } from './trusted-proxies.ts';

type Section = 'general_settings' | 'router_settings';

/** Never shown, never compared: credentials and URLs that may carry them. */
export const SECRET_SETTINGS: ReadonlySet<string> = new Set([
  'master_key',
  'salt_key',
  'database_url',
  'telemetry_database_url',
  'redis_url',
]);

/** general_settings shown by GET /ui/api/settings (an allowlist, so a new secret is never shown by accident). */
const SHOWN_GENERAL = [
  'tier_policy_mode',
  'tier_policy_missing_service_mode',
  'redis_degraded_mode',
  'redis_command_timeout_ms',
  'redis_key_prefix',
  'database_pool_size',
  'spend_ingestion_mode',
  'spend_finalization_timeout_ms',
  'embeddings_batch_enabled',
  'batch_file_store',
  'batch_file_max_bytes',
  'batch_lease_seconds',
  'cache_invalidation_worker_enabled',
  'auth_cache_ttl_seconds',
  'max_request_body_bytes',
  'request_timeout_seconds',
  'body_read_timeout_seconds',
  'shutdown_grace_seconds',
  'shutdown_pre_stop_seconds',
  'request_logging',
  'console_enabled',
  'mcp_tool_loop_max_iterations',
  'mcp_catalog_refresh_interval_seconds',
  'mcp_connections_per_key',
  'budget_reconcile_interval_seconds',
  'budget_reservation_default_max_tokens',
  'mcp_allowed_hosts',
  'upstream_allowed_hosts',
  'response_cache',
  'audit_retention_days',
  'trusted_proxies',
  'max_concurrent_body_bytes_per_key',
] as const;

/** Settings the PATCH accepts a change of: none today (each is read once, at start). */
export const RUNTIME_CHANGEABLE: readonly string[] = [];

const TIER_MODES = new Set(['tier_policy_mode', 'tier_policy_missing_service_mode']);

const schemas = {
  general_settings: GeneralSettingsSchema.properties as Record<string, unknown>,
  router_settings: RouterSettingsSchema.properties as Record<string, unknown>,
};
const validators = new Map<string, ReturnType<typeof Compile>>();

export interface SettingsView {
  general_settings: Record<string, unknown>;
  router_settings: Record<string, unknown>;
  /** Where each tier-policy mode came from: general_settings, environment or default. */
  sources: Config['tier_mode_sources'];
  runtime_changeable: readonly string[];
}

/** The effective settings that matter to operators; never a secret. */
export function settingsView(config: Config): SettingsView {
  const general = config.general_settings as unknown as Record<string, unknown>;
  return {
    general_settings: Object.fromEntries(SHOWN_GENERAL.map((key) => [key, general[key]])),
    router_settings: { ...config.router_settings },
    sources: config.tier_mode_sources,
    runtime_changeable: RUNTIME_CHANGEABLE,
  };
}

/**
 * Checks a PATCH body (`{general_settings?: {...}, router_settings?: {...}}`, objects merged into the
 * effective settings). Returns the error to answer, or undefined when nothing would change.
 */
export function settingsPatchError(config: Config, body: Record<string, unknown>): GatewayError | undefined {
  const problems: Array<{ param: string; text: string }> = [];
  const changed: string[] = [];
  for (const [sectionName, patch] of Object.entries(body)) {
    if (sectionName !== 'general_settings' && sectionName !== 'router_settings') {
      problems.push({
        param: sectionName,
        text: 'is not a settings section (general_settings, router_settings)',
      });
      continue;
    }
    const section = sectionName as Section;
    if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
      problems.push({ param: section, text: 'must be an object of settings' });
      continue;
    }
    const effective = config[section] as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(patch)) {
      const param = `${section}.${key}`;
      const problem = valueProblem(section, key, value);
      if (problem) problems.push({ param, text: problem });
      else if (differs(value, effectiveValue(section, key, effective[key]), section, key))
        changed.push(param);
    }
  }
  if (problems.length > 0) {
    const text = problems.map((problem) => `${problem.param}: ${problem.text}`).join('; ');
    return errors.invalidRequest(`${text}. Nothing was changed.`, problems[0]!.param);
  }
  if (changed.length === 0) return undefined;
  const tier = changed.filter((param) => TIER_MODES.has(param.slice(param.indexOf('.') + 1)));
  const named = tier.length > 0 ? [...tier, ...changed.filter((param) => !tier.includes(param))] : changed;
  const why =
    tier.length > 0
      ? 'The tier-policy modes are read only at start (explicit general_settings first, then GATEWAY_TIER_POLICY_MODE and GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE)'
      : 'These settings are read only at start';
  return errors.restartRequired(
    named[0]!,
    `${named.join(', ')}: ${why}; change the configuration and restart the gateway. Nothing was changed; the running configuration stays as it is.`,
  );
}

function valueProblem(section: Section, key: string, value: unknown): string | undefined {
  if (section === 'general_settings' && SECRET_SETTINGS.has(key))
    return 'is a secret or connection setting, never shown or changed through the admin API; set it in the configuration and restart';
  const schema = schemas[section][key];
  if (schema === undefined) return 'is not a known setting';
  let validator = validators.get(`${section}.${key}`);
  if (!validator) {
    validator = Compile(schema as Parameters<typeof Compile>[0]);
    validators.set(`${section}.${key}`, validator);
  }
  if (!validator.Check(value)) return 'is not a valid value for this setting (see docs/configuration.md)';
  if (key === 'trusted_proxies') {
    const problem = (value as string[]).map(trustedProxyProblem).find((text) => text !== undefined);
    if (problem) return problem;
  }
  if (key === 'tier_policy_mode' && value === 'shadow')
    return '"shadow" is not built (tier limits would be neither enforced nor measured); use "off" or "enforce"';
  return undefined;
}

/** The effective value in the shape a PATCH writes it (fallbacks are lists of one-entry maps in files). */
function effectiveValue(section: Section, key: string, value: unknown): unknown {
  if (section === 'router_settings' && (key === 'fallbacks' || key === 'context_window_fallbacks'))
    return Object.entries(value as Record<string, string[]>).map(([group, targets]) => ({
      [group]: targets,
    }));
  return value;
}

/** Whether applying `patch` would change `current`: objects merge (only their named keys count). */
function differs(patch: unknown, current: unknown, section: Section, key: string): boolean {
  if (section === 'router_settings' && (key === 'fallbacks' || key === 'context_window_fallbacks'))
    return JSON.stringify(mergedFallbacks(patch)) !== JSON.stringify(mergedFallbacks(current));
  if (isPlainObject(patch) && isPlainObject(current))
    return Object.entries(patch).some(([name, value]) => differs(value, current[name], section, name));
  return JSON.stringify(patch) !== JSON.stringify(current);
}

function mergedFallbacks(list: unknown): Record<string, string[]> {
  const merged: Record<string, string[]> = {};
  for (const entry of list as Array<Record<string, string[]>>)
    for (const [group, targets] of Object.entries(entry))
      merged[group] = [...(merged[group] ?? []), ...targets.filter((target) => target !== group)];
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
