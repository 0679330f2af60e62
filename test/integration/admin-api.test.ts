/**
 * The identity admin API (spec "Admin limit endpoints", issue 2): organizations, teams, users and keys
 * on the embedded default and on PostgreSQL + Redis, with field-naming 400s and nothing stored on a
 * rejected request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/store/db/create-database.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('admin API on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  async function countRows(table: 'organizations' | 'teams' | 'users' | 'api_keys'): Promise<number> {
    const { db } = gateway.gateway.database;
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it('creates an organization, then upserts it by id keeping omitted limits', async () => {
    const created = await gateway.admin('POST', '/ui/api/organizations', {
      organization_id: 'org-upsert',
      organization_alias: 'Acme',
      rpm_limit: 100,
      rpd_limit: 5000,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      organization_id: 'org-upsert',
      rpm_limit: 100,
      rpd_limit: 5000,
      tpm_limit: null,
    });
    const updated = await gateway.admin('POST', '/ui/api/organizations', {
      organization_id: 'org-upsert',
      rpm_limit: 50,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ organization_alias: 'Acme', rpm_limit: 50, rpd_limit: 5000 });
  });

  it('updates with PUT: an omitted field keeps its value and null clears it', async () => {
    await gateway.admin('POST', '/ui/api/organizations', {
      organization_id: 'org-put',
      rpm_limit: 10,
      tpm_limit: 1000,
    });
    const response = await gateway.admin('PUT', '/ui/api/organizations/org-put', {
      rpm_limit: null,
      tpd_limit: 500,
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ rpm_limit: null, tpm_limit: 1000, tpd_limit: 500 });
    expect((await gateway.admin('PUT', '/ui/api/organizations/org-missing', { rpm_limit: 1 })).status).toBe(
      404,
    );
  });

  it.each([
    ['output_tpm_limit', '1000'],
    ['output_tpm_limit', true],
    ['output_tpm_limit', 1.5],
    ['output_tpm_limit', 0],
    ['output_tpm_limit', -5],
    ['rpm_limit', '10'],
    ['rph_limit', 2.5],
  ])('rejects %s = %j with a 400 naming the field, storing nothing', async (field, value) => {
    const before = await countRows('teams');
    const response = await gateway.admin('POST', '/ui/api/teams', {
      team_id: `team-bad-${field}`,
      [field]: value,
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: field });
    expect(response.body.error.message).toContain(field);
    expect(await countRows('teams')).toBe(before);
  });

  it('rejects an invalid model_output_tpm_limit map on a key without creating the key', async () => {
    const before = await countRows('api_keys');
    const response = await gateway.admin('POST', '/ui/api/keys', {
      key_name: 'x',
      model_output_tpm_limit: { 'gpt-*': 10 },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe('model_output_tpm_limit');
    expect(await countRows('api_keys')).toBe(before);
  });

  it('rejects unknown fields, naming them and suggesting the right one', async () => {
    const response = await gateway.admin('POST', '/ui/api/keys', { key_name: 'x', rpm_limt: 5 });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe('rpm_limt');
    expect(response.body.error.message).toContain("did you mean 'rpm_limit'");
  });

  it('rejects references to entities that do not exist, naming the field', async () => {
    const before = await countRows('teams');
    const response = await gateway.admin('POST', '/ui/api/teams', {
      team_id: 't-orphan',
      organization_id: 'org-nope',
    });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe('organization_id');
    expect(await countRows('teams')).toBe(before);
  });

  // Output-token maps need output-policy settings: test/integration/output-tpm-policies.test.ts.
  it('clears a per-model map with {} and keeps it when omitted', async () => {
    const created = await gateway.admin('POST', '/ui/api/teams', {
      team_id: 't-map',
      model_tpm_limit: { 'gpt-4o': 100, demo: 5 },
    });
    expect(created.body.model_tpm_limit).toEqual({ 'gpt-4o': 100, demo: 5 });
    const kept = await gateway.admin('PUT', '/ui/api/teams/t-map', { rpm_limit: 3 });
    expect(kept.body.model_tpm_limit).toEqual({ 'gpt-4o': 100, demo: 5 });
    const narrowed = await gateway.admin('PUT', '/ui/api/teams/t-map', {
      model_tpm_limit: { demo: 5 },
    });
    expect(narrowed.body.model_tpm_limit).toEqual({ demo: 5 });
    const cleared = await gateway.admin('PUT', '/ui/api/teams/t-map', { model_tpm_limit: {} });
    expect(cleared.body.model_tpm_limit).toBeNull();
  });

  it('returns a key secret once, stores only a keyed hash, and never shows the secret again', async () => {
    const created = await gateway.admin('POST', '/ui/api/keys', {
      key_name: 'once',
      rpm_limit: 7,
      max_parallel_requests: 2,
    });
    expect(created.status).toBe(201);
    const { key, key_id } = created.body;
    expect(key).toMatch(/^sk-/);
    expect(created.body).toMatchObject({ key_name: 'once', rpm_limit: 7, max_parallel_requests: 2 });
    const stored = await gateway.gateway.database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_id', '=', key_id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(key.slice(3));
    expect(stored.key_hash).not.toBe(key);
    const fetched = await gateway.admin('GET', `/ui/api/keys/${key_id}`);
    expect(fetched.body.key).toBeUndefined();
    expect(fetched.body.key_hash).toBeUndefined();
    expect(fetched.body.key_prefix).toBe(`${key.slice(0, 9)}…`);
    const listed = await gateway.admin('GET', '/ui/api/keys?limit=500');
    expect(JSON.stringify(listed.body)).not.toContain(key.slice(3));
  });

  it('lists with limit, offset and total', async () => {
    for (const id of ['u-page-1', 'u-page-2', 'u-page-3'])
      await gateway.admin('POST', '/ui/api/users', { user_id: id });
    const page = await gateway.admin('GET', '/ui/api/users?limit=2&offset=1');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ object: 'list', limit: 2, offset: 1 });
    expect(page.body.data).toHaveLength(2);
    expect(page.body.total).toBeGreaterThanOrEqual(3);
    expect((await gateway.admin('GET', '/ui/api/users?limit=0')).status).toBe(400);
    expect((await gateway.admin('GET', '/ui/api/users?limit=abc')).body.error.param).toBe('limit');
  });

  it('refuses to delete an organization that still has teams, and deletes a team with its keys', async () => {
    await gateway.admin('POST', '/ui/api/organizations', { organization_id: 'org-del' });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 't-del', organization_id: 'org-del' });
    const teamKey = await gateway.admin('POST', '/ui/api/keys', { team_id: 't-del' });
    expect((await gateway.admin('DELETE', '/ui/api/organizations/org-del')).status).toBe(409);
    expect((await gateway.admin('DELETE', '/ui/api/teams/t-del')).status).toBe(200);
    expect((await gateway.admin('GET', `/ui/api/keys/${teamKey.body.key_id}`)).status).toBe(404);
    expect((await gateway.admin('DELETE', '/ui/api/organizations/org-del')).status).toBe(200);
    expect((await gateway.admin('GET', '/ui/api/organizations/org-del')).status).toBe(404);
  });

  it('lets an admin user call the admin API with their own key, and refuses a member', async () => {
    await gateway.admin('POST', '/ui/api/users', { user_id: 'u-admin', role: 'admin' });
    await gateway.admin('POST', '/ui/api/users', { user_id: 'u-member', role: 'member' });
    const adminKey = await gateway.createKey({ user_id: 'u-admin' });
    const memberKey = await gateway.createKey({ user_id: 'u-member' });
    const asAdmin = await fetch(`${gateway.baseUrl}/ui/api/teams`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(asAdmin.status).toBe(200);
    const asMember = await fetch(`${gateway.baseUrl}/ui/api/teams`, {
      headers: { authorization: `Bearer ${memberKey}` },
    });
    expect(asMember.status).toBe(403);
    expect(((await asMember.json()) as { error: { code: string } }).error.code).toBe('master_key_required');
    const anonymous = await fetch(`${gateway.baseUrl}/ui/api/teams`);
    expect(anonymous.status).toBe(401);
  });

  it('keeps a user in a team consistent with its organization', async () => {
    await gateway.admin('POST', '/ui/api/organizations', { organization_id: 'org-a' });
    await gateway.admin('POST', '/ui/api/organizations', { organization_id: 'org-b' });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 't-in-a', organization_id: 'org-a' });
    const response = await gateway.admin('POST', '/ui/api/users', {
      user_id: 'u-x',
      team_id: 't-in-a',
      organization_id: 'org-b',
    });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe('team_id');
  });

  it('accepts duration and expires_at for keys, but not both', async () => {
    const withDuration = await gateway.admin('POST', '/ui/api/keys', { duration: '30d' });
    expect(Date.parse(withDuration.body.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const both = await gateway.admin('POST', '/ui/api/keys', {
      duration: '1h',
      expires_at: '2030-01-01T00:00:00Z',
    });
    expect(both.status).toBe(400);
    expect(both.body.error.param).toBe('duration');
  });

  it('migrates the same schema on a second start without changes', async () => {
    const database = await createDatabase({
      url: backend.databaseUrl,
      poolSize: 1,
      ...(backend.schema ? { schema: backend.schema } : {}),
    });
    const { migrateToLatest } = await import('../../src/store/db/migrate.ts');
    expect((await migrateToLatest(database)).applied).toEqual([]);
    await database.close();
  });
});
