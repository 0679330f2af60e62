/**
 * The admin settings API (spec Versioning 6, Errors 409): GET /ui/api/settings shows the effective
 * settings (never a secret) and where each tier-policy mode came from; PATCH /ui/api/settings accepts
 * no runtime change (nothing can change while the gateway runs): a change of the effective tier modes
 * is 409 restart_required naming the setting, and a refused change leaves the running configuration
 * exactly as it was. Tier modes are read at start: explicit general_settings first, then environment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const tierEnv = {
  GATEWAY_TIER_POLICY_MODE: 'enforce',
  GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE: 'fail_closed',
};

describe.each(await availableBackends())('the settings API on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({
      backend,
      masterKey: 'sk-settings-master-key-0123456789',
      generalSettings: '  salt_key: settings-salt-0123456789abcdef\n  request_timeout_seconds: 120\n',
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const patch = (body: unknown) => gateway.admin('PATCH', '/ui/api/settings', body);

  it('shows the effective settings, their tier-mode sources and the backends, and never a secret or URL', async () => {
    const response = await gateway.admin('GET', '/ui/api/settings');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      object: 'settings',
      general_settings: {
        tier_policy_mode: 'off',
        tier_policy_missing_service_mode: 'fail_open',
        request_timeout_seconds: 120,
        redis_degraded_mode: 'fail_open',
      },
      router_settings: { num_retries: 2, routing_strategy: 'simple-shuffle' },
      sources: { tier_policy_mode: 'default', tier_policy_missing_service_mode: 'default' },
      tier_policies: { enforcing: false, stored: 0 },
      runtime_changeable: [],
      database: backend.schema ? 'postgres' : 'sqlite',
      shared_store: backend.redisUrl ? 'redis' : 'memory',
    });
    const text = JSON.stringify(response.body);
    for (const secret of ['sk-settings-master-key', 'settings-salt', backend.databaseUrl, 'redis://'])
      expect(text).not.toContain(secret);
    for (const key of ['master_key', 'salt_key', 'database_url', 'telemetry_database_url', 'redis_url'])
      expect(response.body.general_settings).not.toHaveProperty(key);
  });

  it('answers 409 restart_required naming the tier mode a PATCH would change, and changes nothing', async () => {
    const before = await gateway.admin('GET', '/ui/api/settings');
    const response = await patch({ general_settings: { tier_policy_mode: 'enforce' } });
    expect(response.status).toBe(409);
    expect(response.body.error).toMatchObject({
      type: 'conflict_error',
      code: 'restart_required',
      param: 'general_settings.tier_policy_mode',
    });
    expect(response.body.error.message).toContain('general_settings.tier_policy_mode');
    const both = await patch({
      general_settings: { tier_policy_missing_service_mode: 'fail_closed', request_logging: false },
    });
    expect(both.status).toBe(409);
    expect(both.body.error.param).toBe('general_settings.tier_policy_missing_service_mode');
    expect(both.body.error.message).toContain('general_settings.request_logging');
    expect(await gateway.admin('GET', '/ui/api/settings')).toEqual(before);
    expect(gateway.gateway.tierPolicies.enforcing).toBe(false);
  });

  it('refuses a change of any other setting by name too (none can change at runtime)', async () => {
    for (const [body, param] of [
      [{ general_settings: { request_timeout_seconds: 30 } }, 'general_settings.request_timeout_seconds'],
      [{ router_settings: { num_retries: 5 } }, 'router_settings.num_retries'],
      [{ general_settings: { response_cache: { enabled: true } } }, 'general_settings.response_cache'],
      [{ router_settings: { fallbacks: [{ demo: ['other'] }] } }, 'router_settings.fallbacks'],
    ] as const) {
      const response = await patch(body);
      expect(response.status, param).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'restart_required', param });
    }
  });

  it('accepts a PATCH that changes nothing (the effective values, a partial object, an empty body)', async () => {
    for (const body of [
      { general_settings: { tier_policy_mode: 'off', tier_policy_missing_service_mode: 'fail_open' } },
      { general_settings: { request_timeout_seconds: 120, response_cache: { enabled: false } } },
      { router_settings: { num_retries: 2, fallbacks: [] } },
      {},
    ]) {
      const response = await patch(body);
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(response.body.general_settings.tier_policy_mode).toBe('off');
    }
  });

  it('answers 400 naming an unknown, invalid or secret setting, never comparing a secret', async () => {
    const cases = [
      [{ general_settings: { no_such_setting: 1 } }, 'general_settings.no_such_setting'],
      [{ general_settings: { tier_policy_mode: 'enforcing' } }, 'general_settings.tier_policy_mode'],
      [{ general_settings: { tier_policy_mode: 'shadow' } }, 'general_settings.tier_policy_mode'],
      [{ general_settings: { request_timeout_seconds: 'slow' } }, 'general_settings.request_timeout_seconds'],
      [{ router_settings: { num_retries: -1 } }, 'router_settings.num_retries'],
      // The right master key and a wrong one get the same answer: the API is no oracle for secrets.
      [
        { general_settings: { master_key: 'sk-settings-master-key-0123456789' } },
        'general_settings.master_key',
      ],
      [{ general_settings: { master_key: 'sk-wrong' } }, 'general_settings.master_key'],
      [{ general_settings: { database_url: backend.databaseUrl } }, 'general_settings.database_url'],
      [{ general_settings: 'enforce' }, 'general_settings'],
    ] as const;
    const secretAnswers = new Set<string>();
    for (const [body, param] of cases) {
      const response = await patch(body);
      expect(response.status, param).toBe(400);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error' });
      expect(response.body.error.message, param).toContain(param);
      if (param === 'general_settings.master_key') secretAnswers.add(JSON.stringify(response.body));
      else expect(response.body.error.param, JSON.stringify(body)).toBe(param);
    }
    expect(secretAnswers.size).toBe(1);
    const unknownSection = await patch({ model_list: [] });
    expect(unknownSection.status).toBe(400);
  });

  it('keeps the last valid runtime configuration after refused changes: tier policies stay unenforced', async () => {
    await gateway.admin('POST', '/ui/api/organizations', { organization_id: 'org-s' });
    expect(
      (
        await gateway.admin('POST', '/ui/api/tier-policies', {
          organization_id: 'org-s',
          model: 'demo',
          output_tpm_limit: 1,
        })
      ).status,
    ).toBe(201);
    await patch({
      general_settings: { tier_policy_mode: 'enforce', tier_policy_missing_service_mode: 'fail_closed' },
    });
    await patch({ general_settings: { tier_policy_mode: 'nonsense' } });
    const settings = await gateway.admin('GET', '/ui/api/settings');
    expect(settings.body.tier_policies).toEqual({ enforcing: false, stored: 1 });
    expect(settings.body.general_settings.tier_policy_mode).toBe('off');
    // Calls of the organization on the tier-limited model are not governed by the tier limit of 1.
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-s', organization_id: 'org-s' });
    const key = await gateway.createKey({ team_id: 'team-s' });
    for (let call = 0; call < 3; call++) {
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hello there' }] }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit-output-tokens')).toBeNull();
    }
  });
});

describe.each(await availableBackends())('tier modes at start on %s', (_name, makeBackend) => {
  let backend: Backend;
  const gateways: TestGateway[] = [];

  beforeAll(() => {
    backend = makeBackend();
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await backend?.cleanup();
  });

  async function start(generalSettings: string, env: Record<string, string>) {
    const gateway = await startTestGateway({ backend, generalSettings, env });
    gateways.push(gateway);
    return (await gateway.admin('GET', '/ui/api/settings')).body;
  }

  it('read the environment when general_settings does not name the modes', async () => {
    const settings = await start('', tierEnv);
    expect(settings.general_settings).toMatchObject({
      tier_policy_mode: 'enforce',
      tier_policy_missing_service_mode: 'fail_closed',
    });
    expect(settings.sources).toEqual({
      tier_policy_mode: 'environment',
      tier_policy_missing_service_mode: 'environment',
    });
    expect(settings.tier_policies.enforcing).toBe(true);
  });

  it('prefer explicit general_settings over the environment', async () => {
    const settings = await start('  tier_policy_mode: "off"\n', tierEnv);
    expect(settings.general_settings).toMatchObject({
      tier_policy_mode: 'off',
      tier_policy_missing_service_mode: 'fail_closed',
    });
    expect(settings.sources).toEqual({
      tier_policy_mode: 'general_settings',
      tier_policy_missing_service_mode: 'environment',
    });
    expect(settings.tier_policies.enforcing).toBe(false);
  });

  it('enforce only with enforce and fail_closed: enforce with fail_open stores but does not enforce', async () => {
    const settings = await start('  tier_policy_mode: enforce\n', {
      GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE: 'fail_open',
    });
    expect(settings.general_settings.tier_policy_mode).toBe('enforce');
    expect(settings.tier_policies.enforcing).toBe(false);
  });

  it('answer 409 restart_required to a PATCH back to the default when the environment set the mode', async () => {
    const gateway = await startTestGateway({ backend, env: tierEnv });
    gateways.push(gateway);
    const response = await gateway.admin('PATCH', '/ui/api/settings', {
      general_settings: { tier_policy_mode: 'off' },
    });
    expect(response.status).toBe(409);
    expect(response.body.error).toMatchObject({
      code: 'restart_required',
      param: 'general_settings.tier_policy_mode',
    });
    const same = await gateway.admin('PATCH', '/ui/api/settings', {
      general_settings: { tier_policy_mode: 'enforce', tier_policy_missing_service_mode: 'fail_closed' },
    });
    expect(same.status).toBe(200);
  });
});
