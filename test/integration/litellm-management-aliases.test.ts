/**
 * LiteLLM-style clients (issue 10): the OpenAI routes without the /v1 prefix, and LiteLLM's most used
 * management endpoints as aliases of the admin API, driven the way LiteLLM's docs drive them (curl-style
 * JSON, and the openai SDK with a base URL without /v1).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('LiteLLM-style clients', () => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const call = async (method: string, path: string, body?: unknown, bearer = gateway.masterKey) => {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('generates, reads, updates and deletes a key the LiteLLM way, and the key works without /v1', async () => {
    const generated = await call('POST', '/key/generate', {
      models: ['demo'],
      key_alias: 'migrated',
      duration: '30d',
      metadata: { team: 'search' },
    });
    expect(generated.status).toBe(200);
    expect(generated.body).toMatchObject({ key_alias: 'migrated', key_name: 'migrated', models: ['demo'] });
    const secret = generated.body.key as string;
    const client = new OpenAI({ apiKey: secret, baseURL: gateway.baseUrl, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'demo',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe('You said: hi');
    expect((await client.models.list()).data.map((model) => model.id)).toEqual(['demo']);
    const info = await call('GET', `/key/info?key=${encodeURIComponent(secret)}`);
    expect(info.body.info).toMatchObject({ key_id: generated.body.key_id, key_name: 'migrated' });
    expect(JSON.stringify(info.body)).not.toContain(secret);
    const updated = await call('POST', '/key/update', { key: secret, rpm_limit: 7 });
    expect(updated.body.rpm_limit).toBe(7);
    const deleted = await call('POST', '/key/delete', { keys: [secret] });
    expect(deleted.body.deleted_keys).toEqual([generated.body.key_id]);
    await expect(client.models.list()).rejects.toMatchObject({ status: 401 });
  });

  it('refuses LiteLLM fields that have no counterpart, naming them', async () => {
    const refused = await call('POST', '/key/generate', { tags: ['a'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('tags');
  });

  it('maps LiteLLM budgets (max_budget, soft_budget, budget_duration) and validates them strictly', async () => {
    const budget = { max_budget: 10, soft_budget: 8, budget_duration: '30d' };
    const generated = await call('POST', '/key/generate', budget);
    expect(generated.status).toBe(200);
    expect(generated.body).toMatchObject(budget);
    const team = await call('POST', '/team/new', { max_budget: 100, budget_duration: null });
    expect(team.body).toMatchObject({ max_budget: 100, soft_budget: null, budget_duration: null });
    const updated = await call('POST', '/key/update', { key: generated.body.key, max_budget: 20 });
    expect(updated.body).toMatchObject({ max_budget: 20, soft_budget: 8, budget_duration: '30d' });
    const refused = await call('POST', '/key/generate', { max_budget: 1, soft_budget: 2 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('soft_budget');
  });

  it('creates teams and users (with a key, as LiteLLM does) and lists deployments without secrets', async () => {
    const team = await call('POST', '/team/new', { team_alias: 'search' });
    expect(team.body).toMatchObject({ team_alias: 'search' });
    const user = await call('POST', '/user/new', {
      user_email: 'ada@example.com',
      user_role: 'internal_user',
      team_id: team.body.team_id,
    });
    expect(user.body).toMatchObject({ email: 'ada@example.com', role: 'member', team_id: team.body.team_id });
    expect(user.body.key).toMatch(/^sk-/);
    expect((await call('GET', '/models', undefined, user.body.key)).status).toBe(200);
    const models = await call('GET', '/model/info');
    expect(models.body.data).toEqual([
      {
        model_name: 'demo',
        litellm_params: { model: 'fake/demo' },
        model_info: { id: 'demo-fake', mode: 'chat' },
      },
    ]);
  });

  it('keeps the aliases to the master key and proxy administrators', async () => {
    await call('POST', '/ui/api/organizations', { organization_id: 'org-x' });
    await call('POST', '/ui/api/users', {
      user_id: 'org-x-admin',
      organization_id: 'org-x',
      role: 'org_admin',
    });
    const orgAdminKey = (await call('POST', '/ui/api/keys', { user_id: 'org-x-admin' })).body.key as string;
    expect((await call('POST', '/team/new', { organization_id: 'org-x' }, orgAdminKey)).status).toBe(403);
    expect((await call('GET', '/model/info', undefined, 'sk-wrong')).status).toBe(401);
  });
});
