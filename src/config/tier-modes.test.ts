/** Tier-policy modes at start (spec Versioning 6): explicit general_settings first, then environment. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { parseConfig } from './load-config.ts';

const base = { dataDir: '/tmp/switchboard-data', path: undefined, source: 'test.yaml' };
const enforceEnv = {
  GATEWAY_TIER_POLICY_MODE: 'enforce',
  GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE: 'fail_closed',
};

function load(yaml: string, env: Record<string, string> = {}) {
  return parseConfig(yaml, { ...base, env });
}

function issuesOf(yaml: string, env: Record<string, string> = {}): readonly string[] {
  try {
    load(yaml, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('tier-policy modes at start', () => {
  it('default to off and fail_open when neither settings nor environment name them', () => {
    const config = load('model_list: []\n');
    expect(config.general_settings.tier_policy_mode).toBe('off');
    expect(config.general_settings.tier_policy_missing_service_mode).toBe('fail_open');
    expect(config.tier_mode_sources).toEqual({
      tier_policy_mode: 'default',
      tier_policy_missing_service_mode: 'default',
    });
  });

  it('read the environment when general_settings does not name them', () => {
    const config = load('model_list: []\n', enforceEnv);
    expect(config.general_settings.tier_policy_mode).toBe('enforce');
    expect(config.general_settings.tier_policy_missing_service_mode).toBe('fail_closed');
    expect(config.tier_mode_sources).toEqual({
      tier_policy_mode: 'environment',
      tier_policy_missing_service_mode: 'environment',
    });
  });

  it('prefer explicit general_settings over the environment, each mode on its own', () => {
    const config = load('general_settings:\n  tier_policy_mode: "off"\n', enforceEnv);
    expect(config.general_settings.tier_policy_mode).toBe('off');
    expect(config.general_settings.tier_policy_missing_service_mode).toBe('fail_closed');
    expect(config.tier_mode_sources).toEqual({
      tier_policy_mode: 'general_settings',
      tier_policy_missing_service_mode: 'environment',
    });
  });

  it('refuse an environment value that is not a mode, naming the variable', () => {
    expect(issuesOf('model_list: []\n', { GATEWAY_TIER_POLICY_MODE: 'enforcing' })).toEqual([
      'GATEWAY_TIER_POLICY_MODE: "enforcing" is not a tier_policy_mode (expected one of off, shadow, enforce)',
    ]);
    expect(issuesOf('model_list: []\n', { GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE: 'closed' })).toEqual([
      'GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE: "closed" is not a tier_policy_missing_service_mode (expected one of fail_open, fail_closed)',
    ]);
  });

  it('ignore an empty environment variable (unset in a container spec)', () => {
    expect(
      load('model_list: []\n', { GATEWAY_TIER_POLICY_MODE: '' }).tier_mode_sources.tier_policy_mode,
    ).toBe('default');
  });

  it('refuse shadow by name, from the file or the environment (it is not built)', () => {
    expect(issuesOf('general_settings:\n  tier_policy_mode: shadow\n')).toEqual([
      'general_settings.tier_policy_mode: "shadow" is not built (tier limits would be neither enforced nor measured); use "off" or "enforce"',
    ]);
    expect(issuesOf('model_list: []\n', { GATEWAY_TIER_POLICY_MODE: 'shadow' })).toEqual([
      'GATEWAY_TIER_POLICY_MODE: "shadow" is not built (tier limits would be neither enforced nor measured); use "off" or "enforce"',
    ]);
  });
});
