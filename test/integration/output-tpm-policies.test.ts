/**
 * Output-token policies in the admin API (spec output rules 1, 7 and 10, Authentication 4): the field
 * and map rules under supported settings, and the requirements check in admin writes and at start-up.
 * Settings Redis must not have (an evicting policy, CONFIG renamed) run on a private redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.ts';
import { type Backend, postgresBackend, sqliteBackend } from '../support/backends.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable, TEST_REDIS_URL } from '../support/test-env.ts';

const real = await realBackendsAvailable();
const FAIL_CLOSED = '  redis_degraded_mode: fail_closed\n';

/** The PostgreSQL + Redis backend, on another Redis when `redisUrl` is given. */
function backendOn(redisUrl?: string): Backend {
  const backend = postgresBackend();
  if (!redisUrl) return backend;
  return {
    ...backend,
    redisUrl,
    generalSettingsYaml: backend.generalSettingsYaml.replace(
      JSON.stringify(TEST_REDIS_URL),
      JSON.stringify(redisUrl),
    ),
  };
}

describe.runIf(real)('output policy fields under supported settings', () => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = backendOn();
    gateway = await startTestGateway({ backend, generalSettings: FAIL_CLOSED });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('keeps output_tpm_limit when omitted and clears it with null (rule 1)', async () => {
    const created = await gateway.admin('POST', '/ui/api/organizations', {
      organization_id: 'org-out',
      output_tpm_limit: 500,
    });
    expect(created.body.output_tpm_limit).toBe(500);
    const kept = await gateway.admin('PUT', '/ui/api/organizations/org-out', { rpm_limit: 3 });
    expect(kept.body.output_tpm_limit).toBe(500);
    const cleared = await gateway.admin('PUT', '/ui/api/organizations/org-out', { output_tpm_limit: null });
    expect(cleared.body.output_tpm_limit).toBeNull();
  });

  it.each([['1000'], [true], [1.5], [0], [-5], [2_147_483_648]])(
    'rejects output_tpm_limit = %j with a 400 naming the field (rule 1)',
    async (value) => {
      const response = await gateway.admin('POST', '/ui/api/keys', { output_tpm_limit: value });
      expect(response.status).toBe(400);
      expect(response.body.error.param).toBe('output_tpm_limit');
    },
  );

  it('accepts 2147483647, the largest limit (rule 1)', async () => {
    const response = await gateway.admin('POST', '/ui/api/keys', { output_tpm_limit: 2_147_483_647 });
    expect(response.status).toBe(201);
  });

  it('clears a map with null or {}, keeps it when omitted, and a submitted map replaces it (rule 7)', async () => {
    const created = await gateway.admin('POST', '/ui/api/teams', {
      team_id: 't-out-map',
      model_output_tpm_limit: { 'gpt-4o': 100, demo: 5 },
    });
    expect(created.body.model_output_tpm_limit).toEqual({ 'gpt-4o': 100, demo: 5 });
    const kept = await gateway.admin('PUT', '/ui/api/teams/t-out-map', { rpm_limit: 3 });
    expect(kept.body.model_output_tpm_limit).toEqual({ 'gpt-4o': 100, demo: 5 });
    const narrowed = await gateway.admin('PUT', '/ui/api/teams/t-out-map', {
      model_output_tpm_limit: { demo: 5 },
    });
    expect(narrowed.body.model_output_tpm_limit).toEqual({ demo: 5 });
    const emptied = await gateway.admin('PUT', '/ui/api/teams/t-out-map', { model_output_tpm_limit: {} });
    expect(emptied.body.model_output_tpm_limit).toBeNull();
    await gateway.admin('PUT', '/ui/api/teams/t-out-map', { model_output_tpm_limit: { demo: 1 } });
    const nulled = await gateway.admin('PUT', '/ui/api/teams/t-out-map', { model_output_tpm_limit: null });
    expect(nulled.body.model_output_tpm_limit).toBeNull();
  });

  const entries = (count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`m${i}`, 1]));
  it.each([
    ['65 entries', entries(65)],
    ['an id of 257 UTF-8 bytes', { [`${'é'.repeat(128)}x`]: 1 }],
    ['a wildcard', { 'gpt-*': 1 }],
    ['a ? wildcard', { 'gpt-?': 1 }],
    ['a control character', { 'gpt\u0007': 1 }],
    ['a leading space', { ' gpt': 1 }],
    ['a trailing space', { 'gpt ': 1 }],
    ['an empty id', { '': 1 }],
    ['a zero value', { gpt: 0 }],
    ['a fractional value', { gpt: 1.5 }],
    ['a string value', { gpt: '5' }],
    ['a value above 2147483647', { gpt: 2_147_483_648 }],
  ])('rejects a model_output_tpm_limit map with %s, naming the field (rule 7)', async (_what, map) => {
    const response = await gateway.admin('POST', '/ui/api/keys', { model_output_tpm_limit: map });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toMatch(/^model_output_tpm_limit\b/);
  });

  it('accepts 64 entries of 256-byte ids, and refuses more than 32 KiB of stored JSON (rule 7)', async () => {
    const ids = (fill: string) =>
      Object.fromEntries(
        Array.from({ length: 64 }, (_, i) => [
          `${String(i).padStart(2, '0')}${fill.repeat(254)}`,
          2_147_483_647,
        ]),
      );
    // 64 plain 256-byte ids make about 17 KiB of JSON; quotes are escaped, doubling each id past 32 KiB.
    expect((await gateway.admin('POST', '/ui/api/keys', { model_output_tpm_limit: ids('x') })).status).toBe(
      201,
    );
    const tooLarge = await gateway.admin('POST', '/ui/api/keys', { model_output_tpm_limit: ids('"') });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error).toMatchObject({ param: 'model_output_tpm_limit' });
    expect(tooLarge.body.error.message).toContain('32768 bytes');
  });

  it('refuses per-model output maps on organizations and users, which have none (rule 7)', async () => {
    const organization = await gateway.admin('POST', '/ui/api/organizations', {
      model_output_tpm_limit: { gpt: 1 },
    });
    expect(organization.status).toBe(400);
    const user = await gateway.admin('POST', '/ui/api/users', { model_output_tpm_limit: { gpt: 1 } });
    expect(user.status).toBe(400);
  });
});

describe('the output-policy requirements in admin writes (rule 10)', () => {
  async function expectRefused(gateway: TestGateway, setting: string): Promise<void> {
    for (const [path, body] of [
      ['/ui/api/keys', { output_tpm_limit: 10 }],
      ['/ui/api/teams', { model_output_tpm_limit: { gpt: 10 } }],
      ['/ui/api/organizations', { output_tpm_limit: 10 }],
      ['/ui/api/users', { output_tpm_limit: 10 }],
    ] as const) {
      const response = await gateway.admin('POST', path, body);
      expect(response.status, path).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'output_policy_requirements_unmet', param: setting });
      expect(response.body.error.message).toContain(setting.replace('general_settings.', ''));
    }
    // Clearing or leaving output policies alone is always allowed.
    const cleared = await gateway.admin('POST', '/ui/api/keys', { output_tpm_limit: null, rpm_limit: 5 });
    expect(cleared.status).toBe(201);
  }

  it('the in-memory store: refused naming general_settings.redis_url', async () => {
    const backend = sqliteBackend();
    const gateway = await startTestGateway({ backend, generalSettings: FAIL_CLOSED });
    try {
      await expectRefused(gateway, 'general_settings.redis_url');
    } finally {
      await gateway.close();
      await backend.cleanup();
    }
  });

  it.runIf(real)('fail_open degraded mode: refused naming general_settings.redis_degraded_mode', async () => {
    const backend = backendOn();
    const gateway = await startTestGateway({
      backend,
      generalSettings: '  redis_degraded_mode: fail_open\n',
    });
    try {
      await expectRefused(gateway, 'general_settings.redis_degraded_mode');
    } finally {
      await gateway.close();
      await backend.cleanup();
    }
  });

  it.runIf(real).each([
    ['read with CONFIG GET', []],
    ['read with INFO where CONFIG is renamed away', ['--rename-command', 'CONFIG', '']],
  ])(
    'an evicting Redis (maxmemory-policy allkeys-lru, %s): refused naming maxmemory-policy',
    async (_how, extra) => {
      const redis = await PrivateRedis.start(['--maxmemory-policy', 'allkeys-lru', ...extra]);
      const backend = backendOn(redis.url);
      const gateway = await startTestGateway({ backend, generalSettings: FAIL_CLOSED });
      try {
        await expectRefused(gateway, 'maxmemory-policy');
      } finally {
        await gateway.close();
        await backend.cleanup();
        await redis.kill();
      }
    },
  );
});

describe.runIf(real)('the output-policy requirements at start-up (rule 10)', () => {
  it('refuses to start with stored output policies under unmet settings, naming the setting; starts once they are met', async () => {
    const backend = backendOn();
    const first = await startTestGateway({ backend, generalSettings: FAIL_CLOSED });
    try {
      expect((await first.admin('POST', '/ui/api/keys', { output_tpm_limit: 10 })).status).toBe(201);
    } finally {
      await first.close();
    }
    try {
      const refused = startTestGateway({ backend, generalSettings: '  redis_degraded_mode: fail_open\n' });
      await expect(refused).rejects.toBeInstanceOf(ConfigError);
      await expect(refused).rejects.toThrow(/general_settings\.redis_degraded_mode.*api_keys/s);
      const restarted = await startTestGateway({ backend, generalSettings: FAIL_CLOSED });
      await restarted.close();
    } finally {
      await backend.cleanup();
    }
  });

  it('starts under any settings while no output policy is stored', async () => {
    const backend = backendOn();
    try {
      const gateway = await startTestGateway({
        backend,
        generalSettings: '  redis_degraded_mode: fail_open\n',
      });
      await gateway.close();
    } finally {
      await backend.cleanup();
    }
  });
});
