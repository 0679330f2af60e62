/**
 * Tier policies end to end (spec: Limits > Output tokens rule 8): an organization's tier limit for a
 * model is enforced only with tier_policy_mode enforce and tier_policy_missing_service_mode
 * fail_closed; with off, or enforce with fail_open, the same stored policy governs nothing. Tier
 * counters key on organization and model (not the limit value), are not shared between organizations,
 * and a tier-policy write while tier policies enforce is refused under unsupported store settings.
 * PostgreSQL + Redis, the store clock injected; the fake upstream answers n words as n output tokens.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

const words = (count: number) => 'w '.repeat(count).trim();
const enforceEnv = {
  GATEWAY_TIER_POLICY_MODE: 'enforce',
  GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE: 'fail_closed',
};

describe.runIf(await realBackendsAvailable())('tier policies enforced end to end', () => {
  let upstream: FakeOpenAiServer;
  const backends: Backend[] = [];
  const gateways: TestGateway[] = [];

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    for (const backend of backends) await backend.cleanup();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  async function start(options: { env?: Record<string, string>; generalSettings?: string }) {
    const backend = postgresBackend();
    backends.push(backend);
    const deployment = (name: string) =>
      `  - { model_name: ${name}, params: { provider: openai, model: up, api_base: "${upstream.baseUrl}", api_key: sk-x }, model_info: { id: ${name}-1 } }\n`;
    const gateway = await startTestGateway({
      backend,
      clock: new ManualClock(Date.parse('2026-11-23T12:00:05Z')),
      generalSettings: options.generalSettings ?? '  redis_degraded_mode: fail_closed\n',
      ...(options.env ? { env: options.env } : {}),
      yaml: `model_list:\n${deployment('chat')}${deployment('chat-b')}\nrouter_settings:\n  num_retries: 0\n`,
    });
    gateways.push(gateway);
    return gateway;
  }

  /** An organization with a team and a key on it; the tier policy for `model` at `limit`. */
  async function organization(gateway: TestGateway, id: string, model: string, limit: number | undefined) {
    expect((await gateway.admin('POST', '/ui/api/organizations', { organization_id: id })).status).toBe(201);
    expect(
      (await gateway.admin('POST', '/ui/api/teams', { team_id: `${id}-team`, organization_id: id })).status,
    ).toBe(201);
    let policyId: string | undefined;
    if (limit !== undefined) {
      const policy = await gateway.admin('POST', '/ui/api/tier-policies', {
        organization_id: id,
        model,
        output_tpm_limit: limit,
      });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      policyId = policy.body.tier_policy_id;
    }
    return { key: await gateway.createKey({ team_id: `${id}-team` }), policyId };
  }

  const chat = (gateway: TestGateway, key: string, model = 'chat', output = 1) => {
    upstream.enqueue({ kind: 'answer', text: words(output) });
    return fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
  };

  it('enforce + fail_closed: the tier limit is a soft per-minute limit of the organization on that model only', async () => {
    const gateway = await start({ env: enforceEnv });
    const { key } = await organization(gateway, 'org-e', 'chat', 100);
    const first = await chat(gateway, key, 'chat', 150);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-gateway-ratelimit-output-scope')).toBe('org_model_output_tpm');
    expect(first.headers.get('x-ratelimit-limit-output-tokens')).toBe('100');
    expect(first.headers.get('x-ratelimit-remaining-output-tokens')).toBe('0');
    const denied = await chat(gateway, key);
    expect(denied.status).toBe(429);
    expect(((await denied.json()) as any).error).toMatchObject({
      type: 'rate_limit_error',
      param: 'org_model_output_tpm',
      code: 'org_model_output_tpm_exceeded',
    });
    expect(Number(denied.headers.get('retry-after'))).toBe(55);
    // Another model of the same organization has no tier policy: not governed, no output headers.
    const otherModel = await chat(gateway, key, 'chat-b');
    expect(otherModel.status).toBe(200);
    expect(otherModel.headers.get('x-ratelimit-limit-output-tokens')).toBeNull();
    // Another organization's policy for the same model keeps its own counter (not shared).
    const other = await organization(gateway, 'org-f', 'chat', 100);
    expect((await chat(gateway, other.key)).status).toBe(200);
    // The master key is exempt.
    expect((await chat(gateway, gateway.masterKey)).status).toBe(200);
  });

  it('enforce + fail_closed: counters key on organization and model, so a raised limit admits again at once; a deleted policy governs nothing', async () => {
    const gateway = gateways[0]!;
    const listed = await gateway.admin('GET', '/ui/api/tier-policies?organization_id=org-e&model=chat');
    const path = `/ui/api/tier-policies/${listed.body.data[0].tier_policy_id}`;
    const key = await gateway.createKey({ team_id: 'org-e-team' });
    expect((await chat(gateway, key)).status).toBe(429);
    expect((await gateway.admin('PUT', path, { output_tpm_limit: 1_000 })).status).toBe(200);
    const raised = await chat(gateway, key);
    expect(raised.status).toBe(200);
    // 150 recorded before the change, plus this call's 1.
    expect(raised.headers.get('x-ratelimit-remaining-output-tokens')).toBe('849');
    expect((await gateway.admin('PUT', path, { output_tpm_limit: 10 })).status).toBe(200);
    expect((await chat(gateway, key)).status).toBe(429);
    expect((await gateway.admin('DELETE', path)).status).toBe(200);
    const free = await chat(gateway, key);
    expect(free.status).toBe(200);
    expect(free.headers.get('x-ratelimit-limit-output-tokens')).toBeNull();
  });

  it.each([
    ['off (the default)', {}],
    ['enforce with fail_open', { GATEWAY_TIER_POLICY_MODE: 'enforce' }],
    ['off with fail_closed', { GATEWAY_TIER_POLICY_MISSING_SERVICE_MODE: 'fail_closed' }],
  ])('%s: the same stored policy governs nothing', async (_mode, env) => {
    const gateway = await start({ env });
    expect(gateway.gateway.tierPolicies.enforcing).toBe(false);
    const { key } = await organization(gateway, 'org-n', 'chat', 100);
    for (let call = 0; call < 3; call++) {
      const response = await chat(gateway, key, 'chat', 150);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit-output-tokens')).toBeNull();
    }
  });

  it('start-up refuses a stored tier policy that would be enforced under unsupported settings, naming the setting; the same policy starts when not enforced', async () => {
    const backend = postgresBackend();
    backends.push(backend);
    const first = await startTestGateway({
      backend,
      env: enforceEnv,
      generalSettings: '  redis_degraded_mode: fail_closed\n',
    });
    await first.admin('POST', '/ui/api/organizations', { organization_id: 'org-s' });
    expect(
      (
        await first.admin('POST', '/ui/api/tier-policies', {
          organization_id: 'org-s',
          model: 'chat',
          output_tpm_limit: 5,
        })
      ).status,
    ).toBe(201);
    await first.close();
    await expect(startTestGateway({ backend, env: enforceEnv })).rejects.toThrow(
      /general_settings\.redis_degraded_mode.*tier_policies/s,
    );
    const inactive = await startTestGateway({ backend, env: { GATEWAY_TIER_POLICY_MODE: 'enforce' } });
    gateways.push(inactive);
    expect(inactive.gateway.tierPolicies.outputLimit('org-s', 'chat')).toBe(5);
    expect(inactive.gateway.tierPolicies.enforcing).toBe(false);
  });

  it('enforce + fail_closed: a tier-policy write is refused (409 naming the setting) under redis_degraded_mode fail_open, and accepted when tier policies do not enforce', async () => {
    const enforcing = await start({ env: enforceEnv, generalSettings: '' });
    await enforcing.admin('POST', '/ui/api/organizations', { organization_id: 'org-u' });
    const refused = await enforcing.admin('POST', '/ui/api/tier-policies', {
      organization_id: 'org-u',
      model: 'chat',
      output_tpm_limit: 100,
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error.param).toBe('general_settings.redis_degraded_mode');
    expect((await enforcing.admin('GET', '/ui/api/tier-policies')).body.total).toBe(0);
    const relaxed = await start({ generalSettings: '' });
    await relaxed.admin('POST', '/ui/api/organizations', { organization_id: 'org-u' });
    expect(
      (
        await relaxed.admin('POST', '/ui/api/tier-policies', {
          organization_id: 'org-u',
          model: 'chat',
          output_tpm_limit: 100,
        })
      ).status,
    ).toBe(201);
  });
});
