/** The admin settings API's rules (spec Versioning 6): what GET shows, what PATCH refuses and why. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from './load-config.ts';
import { SECRET_SETTINGS, settingsPatchError, settingsView } from './runtime-settings.ts';

const config = parseConfig(
  `model_list:
  - { model_name: a, params: { provider: fake, model: a } }
  - { model_name: b, params: { provider: fake, model: b } }
router_settings:
  fallbacks: [{ a: [b] }]
general_settings:
  master_key: sk-secret-master-0123456789
  redis_url: redis://user:pw@cache:6379
`,
  { env: {}, dataDir: '/tmp/sb', path: undefined, source: 'test' },
);

describe('runtime settings', () => {
  it('shows no secret or URL, and says nothing can change at runtime', () => {
    const view = settingsView(config);
    for (const key of SECRET_SETTINGS) expect(view.general_settings).not.toHaveProperty(key);
    expect(JSON.stringify(view)).not.toMatch(/sk-secret|redis:\/\//);
    expect(view.runtime_changeable).toEqual([]);
  });

  it('accepts what changes nothing: equal values, partial objects, fallbacks as written in a file', () => {
    expect(settingsPatchError(config, {})).toBeUndefined();
    expect(
      settingsPatchError(config, {
        general_settings: { response_cache: { scope: 'team' }, tier_policy_mode: 'off' },
        router_settings: { fallbacks: [{ a: ['b'] }], routing_strategy_args: { ttl: 3600 } },
      }),
    ).toBeUndefined();
  });

  it('refuses a change with 409 restart_required, tier modes named first', () => {
    const error = settingsPatchError(config, {
      router_settings: { num_retries: 9 },
      general_settings: { tier_policy_missing_service_mode: 'fail_closed' },
    });
    expect(error).toMatchObject({ status: 409, code: 'restart_required' });
    expect(error?.param).toBe('general_settings.tier_policy_missing_service_mode');
    expect(error?.message).toContain('router_settings.num_retries');
    expect(settingsPatchError(config, { router_settings: { fallbacks: [{ b: ['a'] }] } })?.param).toBe(
      'router_settings.fallbacks',
    );
  });

  it('answers 400 before 409, and the same 400 for a secret whatever its value', () => {
    const mixed = settingsPatchError(config, {
      general_settings: { tier_policy_mode: 'enforce', request_logging: 'yes' },
    });
    expect(mixed).toMatchObject({ status: 400, param: 'general_settings.request_logging' });
    const right = settingsPatchError(config, {
      general_settings: { master_key: 'sk-secret-master-0123456789' },
    });
    const wrong = settingsPatchError(config, { general_settings: { master_key: 'nope' } });
    expect(right?.status).toBe(400);
    expect(right?.toBody()).toEqual(wrong?.toBody());
  });
});
