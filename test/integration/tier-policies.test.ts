/**
 * Tier policies through the admin API (spec: Limits > Output tokens rule 8; docs/limits.md "Tier
 * policies"): create, read, list, change and delete, the validation 400s naming the field, 404s, the
 * one-per-organization-and-model 409, audit entries, and the in-memory view admission reads, on the
 * embedded default and on PostgreSQL + Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('tier policies on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
    for (const org of ['org-t1', 'org-t2', 'org-gone'])
      expect((await gateway.admin('POST', '/ui/api/organizations', { organization_id: org })).status).toBe(
        201,
      );
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const create = (body: Record<string, unknown>) => gateway.admin('POST', '/ui/api/tier-policies', body);
  const view = () => gateway.gateway.tierPolicies;

  async function countPolicies(): Promise<number> {
    const row = await gateway.gateway.database.db
      .selectFrom('tier_policies')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it('creates a policy, reads it back, and the view admission reads answers for that organization and model only', async () => {
    const created = await create({ organization_id: 'org-t1', model: 'gpt-4o', output_tpm_limit: 1000 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      organization_id: 'org-t1',
      model: 'gpt-4o',
      output_tpm_limit: 1000,
    });
    expect(created.body.tier_policy_id).toMatch(/^tier/);
    const id = created.body.tier_policy_id as string;
    expect((await gateway.admin('GET', `/ui/api/tier-policies/${id}`)).body).toEqual(created.body);
    // The writing replica applies its own change at once (before answering).
    expect(view().outputLimit('org-t1', 'gpt-4o')).toBe(1000);
    expect(view().outputLimit('org-t2', 'gpt-4o')).toBeUndefined();
    expect(view().outputLimit('org-t1', 'gpt-4o-mini')).toBeUndefined();
    expect(view().hasPolicies).toBe(true);
  });

  it('keeps one policy per organization and model: a second create is a 409 naming the existing one', async () => {
    const first = await create({ organization_id: 'org-t2', model: 'claude', output_tpm_limit: 50 });
    expect(first.status).toBe(201);
    const before = await countPolicies();
    const second = await create({ organization_id: 'org-t2', model: 'claude', output_tpm_limit: 60 });
    expect(second.status).toBe(409);
    expect(second.body.error.message).toContain(first.body.tier_policy_id);
    expect(await countPolicies()).toBe(before);
    // The same model in another organization is another policy (not shared between organizations).
    expect((await create({ organization_id: 'org-t1', model: 'claude', output_tpm_limit: 70 })).status).toBe(
      201,
    );
    expect(view().outputLimit('org-t2', 'claude')).toBe(50);
    expect(view().outputLimit('org-t1', 'claude')).toBe(70);
  });

  it.each([
    ['organization_id', { organization_id: 'org-missing', model: 'm', output_tpm_limit: 1 }],
    ['organization_id', { model: 'm', output_tpm_limit: 1 }],
    ['model', { organization_id: 'org-t1', output_tpm_limit: 1 }],
    ['model', { organization_id: 'org-t1', model: '', output_tpm_limit: 1 }],
    ['model', { organization_id: 'org-t1', model: 'gpt-*', output_tpm_limit: 1 }],
    ['model', { organization_id: 'org-t1', model: 'gpt-?', output_tpm_limit: 1 }],
    ['model', { organization_id: 'org-t1', model: ' gpt-4o', output_tpm_limit: 1 }],
    ['model', { organization_id: 'org-t1', model: 'gpt-4o ', output_tpm_limit: 1 }],
    ['model', { organization_id: 'org-t1', model: 'gpt\u00014o', output_tpm_limit: 1 }],
    // 129 two-byte characters: within 256 characters, over 256 UTF-8 bytes.
    ['model', { organization_id: 'org-t1', model: 'é'.repeat(129), output_tpm_limit: 1 }],
    ['model', { organization_id: 'org-t1', model: 7, output_tpm_limit: 1 }],
    ['output_tpm_limit', { organization_id: 'org-t1', model: 'm', output_tpm_limit: '1000' }],
    ['output_tpm_limit', { organization_id: 'org-t1', model: 'm', output_tpm_limit: true }],
    ['output_tpm_limit', { organization_id: 'org-t1', model: 'm', output_tpm_limit: 1.5 }],
    ['output_tpm_limit', { organization_id: 'org-t1', model: 'm', output_tpm_limit: 0 }],
    ['output_tpm_limit', { organization_id: 'org-t1', model: 'm', output_tpm_limit: -5 }],
    ['output_tpm_limit', { organization_id: 'org-t1', model: 'm', output_tpm_limit: 2_147_483_648 }],
    ['output_tpm_limit', { organization_id: 'org-t1', model: 'm', output_tpm_limit: null }],
    ['output_tpm_limit', { organization_id: 'org-t1', model: 'm' }],
  ])('rejects a create with a bad %s (%j) with a 400 naming it, storing nothing', async (field, body) => {
    const before = await countPolicies();
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: field });
    expect(response.body.error.message).toContain(field);
    expect(await countPolicies()).toBe(before);
  });

  it('accepts the boundaries: 256 UTF-8 bytes of model id and a limit of 2147483647', async () => {
    const model = 'é'.repeat(128);
    const response = await create({ organization_id: 'org-t2', model, output_tpm_limit: 2_147_483_647 });
    expect(response.status).toBe(201);
    expect(view().outputLimit('org-t2', model)).toBe(2_147_483_647);
  });

  it('refuses unknown fields, and a PUT that tries to move the policy to another model', async () => {
    const unknown = await create({
      organization_id: 'org-t1',
      model: 'x',
      output_tpm_limit: 1,
      tier: 'gold',
    });
    expect(unknown.status).toBe(400);
    const { body } = await create({ organization_id: 'org-t1', model: 'fixed', output_tpm_limit: 1 });
    const moved = await gateway.admin('PUT', `/ui/api/tier-policies/${body.tier_policy_id}`, {
      model: 'other',
      output_tpm_limit: 2,
    });
    expect(moved.status).toBe(400);
    expect(view().outputLimit('org-t1', 'fixed')).toBe(1);
  });

  it('changes the limit with PUT (validated like a create) and the view follows', async () => {
    const { body } = await create({ organization_id: 'org-t1', model: 'put-model', output_tpm_limit: 10 });
    const path = `/ui/api/tier-policies/${body.tier_policy_id}`;
    const bad = await gateway.admin('PUT', path, { output_tpm_limit: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('output_tpm_limit');
    const updated = await gateway.admin('PUT', path, { output_tpm_limit: 20 });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ tier_policy_id: body.tier_policy_id, output_tpm_limit: 20 });
    expect(view().outputLimit('org-t1', 'put-model')).toBe(20);
  });

  it('answers 404 for an unknown policy on GET, PUT and DELETE', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { output_tpm_limit: 5 }],
      ['DELETE', undefined],
    ] as const) {
      const response = await gateway.admin(method, '/ui/api/tier-policies/tier_missing', body);
      expect(response.status, method).toBe(404);
      expect(response.body.error.type).toBe('not_found_error');
    }
  });

  it('deletes a policy: the view drops it and GET answers 404', async () => {
    const { body } = await create({ organization_id: 'org-t2', model: 'to-delete', output_tpm_limit: 5 });
    const path = `/ui/api/tier-policies/${body.tier_policy_id}`;
    const deleted = await gateway.admin('DELETE', path);
    expect(deleted).toEqual({ status: 200, body: { deleted: true, tier_policy_id: body.tier_policy_id } });
    expect((await gateway.admin('GET', path)).status).toBe(404);
    expect(view().outputLimit('org-t2', 'to-delete')).toBeUndefined();
  });

  it('lists policies oldest first, filtered by organization_id and model', async () => {
    const all = await gateway.admin('GET', '/ui/api/tier-policies?organization_id=org-t1');
    expect(all.status).toBe(200);
    expect(all.body.object).toBe('list');
    expect(all.body.data.length).toBeGreaterThanOrEqual(3);
    expect(all.body.data.every((item: any) => item.organization_id === 'org-t1')).toBe(true);
    expect(all.body.total).toBe(all.body.data.length);
    const one = await gateway.admin('GET', '/ui/api/tier-policies?organization_id=org-t1&model=gpt-4o');
    expect(one.body.data.map((item: any) => item.model)).toEqual(['gpt-4o']);
    const page = await gateway.admin('GET', '/ui/api/tier-policies?limit=1&offset=1');
    expect(page.body).toMatchObject({ limit: 1, offset: 1 });
    expect(page.body.data).toHaveLength(1);
  });

  it('writes an audit entry for each create, update and delete, with before and after', async () => {
    const { body } = await create({ organization_id: 'org-t2', model: 'audited', output_tpm_limit: 1 });
    const path = `/ui/api/tier-policies/${body.tier_policy_id}`;
    await gateway.admin('PUT', path, { output_tpm_limit: 2 });
    await gateway.admin('DELETE', path);
    const audit = await gateway.admin('GET', `/ui/api/audit?target_id=${body.tier_policy_id}`);
    expect(audit.status).toBe(200);
    const entries = [...audit.body.data].reverse();
    expect(entries.map((entry: any) => entry.action)).toEqual([
      'tier_policy.create',
      'tier_policy.update',
      'tier_policy.delete',
    ]);
    expect(entries[0]).toMatchObject({
      actor: 'master',
      target_type: 'tier_policy',
      organization_id: 'org-t2',
      before: null,
      after: { model: 'audited', output_tpm_limit: 1 },
    });
    expect(entries[1]).toMatchObject({ before: { output_tpm_limit: 1 }, after: { output_tpm_limit: 2 } });
    expect(entries[2]).toMatchObject({ before: { output_tpm_limit: 2 }, after: null });
    // A refused write leaves no entry.
    await create({ organization_id: 'org-t2', model: 'audited-bad', output_tpm_limit: 0 });
    const none = await gateway.admin('GET', '/ui/api/audit?action=tier_policy.create&organization_id=org-t2');
    expect(none.body.data.some((entry: any) => entry.after?.model === 'audited-bad')).toBe(false);
  });

  it("deletes an organization's policies with it, and the view drops them", async () => {
    const { body } = await create({ organization_id: 'org-gone', model: 'm', output_tpm_limit: 3 });
    expect(view().outputLimit('org-gone', 'm')).toBe(3);
    expect((await gateway.admin('DELETE', '/ui/api/organizations/org-gone')).status).toBe(200);
    expect((await gateway.admin('GET', `/ui/api/tier-policies/${body.tier_policy_id}`)).status).toBe(404);
    await expect.poll(() => view().outputLimit('org-gone', 'm'), { timeout: 1_000 }).toBeUndefined();
  });
});
