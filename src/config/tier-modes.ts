/**
 * The tier-policy modes (spec: Versioning 6, Limits > Output tokens rule 8): read once at start, an
 * explicit `general_settings` value first, then the environment, then the default. They never change
 * while the process runs; the admin settings API answers 409 restart_required to a change.
 */

export type TierPolicyModeValue = 'off' | 'shadow' | 'enforce';
export type TierMissingServiceModeValue = 'fail_open' | 'fail_closed';
export type SettingSource = 'general_settings' | 'environment' | 'default';

export interface TierModes {
  tier_policy_mode: TierPolicyModeValue;
  tier_policy_missing_service_mode: TierMissingServiceModeValue;
  /** Where each effective value came from. */
  sources: { tier_policy_mode: SettingSource; tier_policy_missing_service_mode: SettingSource };
}

/** The environment variable of each mode (GATEWAY_* like the CLI's variables). */
export const TIER_MODE_ENV = {
  tier_policy_mode: 'GATEWAY_TIER_POLICY_MODE',
  tier_policy_missing_service_mode: 'GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE',
} as const;

const MODE_VALUES: readonly TierPolicyModeValue[] = ['off', 'shadow', 'enforce'];
const MISSING_VALUES: readonly TierMissingServiceModeValue[] = ['fail_open', 'fail_closed'];

/**
 * Resolves both modes; problems are pushed to `issues` (the start is refused). `general` holds the
 * file's values, already checked against the schema's enums.
 */
export function resolveTierModes(
  general: { tier_policy_mode?: string | undefined; tier_policy_missing_service_mode?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  issues: string[],
): TierModes {
  const mode = pick('tier_policy_mode', general.tier_policy_mode, env, MODE_VALUES, 'off', issues);
  const missing = pick(
    'tier_policy_missing_service_mode',
    general.tier_policy_missing_service_mode,
    env,
    MISSING_VALUES,
    'fail_open',
    issues,
  );
  if (mode.value === 'shadow') {
    // Honest refusal: a shadow run would need tier counters recorded and compared without denying,
    // which admission does not do; accepting the value would evaluate nothing.
    issues.push(
      `${describe('tier_policy_mode', mode.source)}: "shadow" is not built (tier limits would be neither enforced nor measured); use "off" or "enforce"`,
    );
  }
  return {
    tier_policy_mode: mode.value,
    tier_policy_missing_service_mode: missing.value,
    sources: { tier_policy_mode: mode.source, tier_policy_missing_service_mode: missing.source },
  };
}

function pick<T extends string>(
  key: keyof typeof TIER_MODE_ENV,
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  values: readonly T[],
  fallback: T,
  issues: string[],
): { value: T; source: SettingSource } {
  if (explicit !== undefined) return { value: explicit as T, source: 'general_settings' };
  const fromEnv = env[TIER_MODE_ENV[key]];
  if (fromEnv === undefined || fromEnv === '') return { value: fallback, source: 'default' };
  if (!values.includes(fromEnv as T)) {
    issues.push(
      `${TIER_MODE_ENV[key]}: ${JSON.stringify(fromEnv)} is not a ${key} (expected one of ${values.join(', ')})`,
    );
    return { value: fallback, source: 'default' };
  }
  return { value: fromEnv as T, source: 'environment' };
}

function describe(key: keyof typeof TIER_MODE_ENV, source: SettingSource): string {
  return source === 'environment' ? TIER_MODE_ENV[key] : `general_settings.${key}`;
}
