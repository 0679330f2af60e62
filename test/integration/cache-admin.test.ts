/**
 * The response cache's admin side (issue 16) on both backends: the `cache_enabled` switch on keys and
 * teams (stored, shown, validated, resolved into the Caller: key, else team, else null) and
 * DELETE /ui/api/cache purging by model, team, both or all, proxy administrators only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyHasher } from '../../src/identity/api-key-secret.ts';
import { Authenticator } from '../../src/identity/authenticator.ts';
import { SettingsRepository } from '../../src/store/db/repositories/settings-repository.ts';
import { responseCacheKey } from '../../src/store/shared/response-cache-keys.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('response cache administration on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let authenticator: Authenticator;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
    const { db } = gateway.gateway.database;
    const salt = await new SettingsRepository(db).getOrCreate('key_salt', 'unused-salt-value');
    // ttlMs 0: every call reloads, so the test sees each admin change at once.
    authenticator = new Authenticator({
      db,
      hashKey: createKeyHasher(salt),
      masterKey: gateway.masterKey,
      clock: new ManualClock(),
      ttlMs: 0,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const cacheEnabledOf = async (key: string) =>
    (await authenticator.authenticate(`Bearer ${key}`)).cacheEnabled;

  it('stores and shows cache_enabled on teams and keys; null (the default) follows the gateway', async () => {
    const team = await gateway.admin('POST', '/ui/api/teams', { team_id: 'cache-t1', cache_enabled: false });
    expect(team.status).toBe(201);
    expect(team.body.cache_enabled).toBe(false);
    const key = await gateway.admin('POST', '/ui/api/keys', { team_id: 'cache-t1', cache_enabled: true });
    expect(key.body.cache_enabled).toBe(true);
    expect((await gateway.admin('GET', `/ui/api/keys/${key.body.key_id}`)).body.cache_enabled).toBe(true);
    const plain = await gateway.admin('POST', '/ui/api/keys', {});
    expect(plain.body.cache_enabled).toBeNull();
    const kept = await gateway.admin('PUT', '/ui/api/teams/cache-t1', { rpm_limit: 10 });
    expect(kept.body.cache_enabled).toBe(false);
    const cleared = await gateway.admin('PUT', '/ui/api/teams/cache-t1', { cache_enabled: null });
    expect(cleared.body.cache_enabled).toBeNull();
  });

  it('refuses a cache_enabled that is not a boolean or null, naming the field', async () => {
    for (const value of ['yes', 1, 'true']) {
      const response = await gateway.admin('POST', '/ui/api/keys', { cache_enabled: value });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain('cache_enabled');
    }
  });

  it("gives the Caller the key's switch, else its team's, else null; the master key gets null", async () => {
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'cache-t2', cache_enabled: false });
    const own = await gateway.admin('POST', '/ui/api/keys', { team_id: 'cache-t2', cache_enabled: true });
    const inherits = await gateway.admin('POST', '/ui/api/keys', { team_id: 'cache-t2' });
    const teamless = await gateway.admin('POST', '/ui/api/keys', {});
    expect(await cacheEnabledOf(own.body.key)).toBe(true);
    expect(await cacheEnabledOf(inherits.body.key)).toBe(false);
    expect(await cacheEnabledOf(teamless.body.key)).toBeNull();
    expect(await cacheEnabledOf(gateway.masterKey)).toBeNull();
    await gateway.admin('PUT', '/ui/api/teams/cache-t2', { cache_enabled: true });
    expect(await cacheEnabledOf(inherits.body.key)).toBe(true);
    await gateway.admin('PUT', `/ui/api/keys/${own.body.key_id}`, { cache_enabled: false });
    expect(await cacheEnabledOf(own.body.key)).toBe(false);
  });

  it('records the switch in the audit log through the usual admin change', async () => {
    await gateway.admin('PUT', '/ui/api/teams/cache-t1', { cache_enabled: true });
    const audit = await gateway.admin('GET', '/ui/api/audit?target_type=team&target_id=cache-t1&limit=1');
    expect(audit.body.data[0]).toMatchObject({ action: 'team.update', after: { cache_enabled: true } });
  });

  describe('DELETE /ui/api/cache', () => {
    const store = () => gateway.gateway.store;
    const key = (team: string | null, model: string, hash = '0a') =>
      responseCacheKey({ team, scopeTag: 'team', model, hash });
    const entries = [
      key('ta', 'openai/gpt-4o'),
      key('ta', 'claude*'),
      key('tb', 'openai/gpt-4o'),
      key('tb', 'claude*'),
      key(null, 'openai/gpt-4o'),
    ];
    const purge = (query = '') => gateway.admin('DELETE', `/ui/api/cache${query}`);
    const remaining = async () => {
      const left: string[] = [];
      for (const entry of entries) if ((await store().cacheGet(entry)) !== undefined) left.push(entry);
      return left;
    };

    beforeAll(async () => {
      await purge();
    });

    it('deletes one model of every team, one team, one model of one team, then everything', async () => {
      for (const entry of entries) await store().cacheSet(entry, '{"cached":true}', 60_000);
      expect((await purge('?model=claude*')).body).toEqual({ deleted: 2 });
      expect(await remaining()).toEqual([entries[0], entries[2], entries[4]]);
      expect((await purge('?team_id=ta')).body).toEqual({ deleted: 1 });
      expect((await purge(`?team_id=tb&model=${encodeURIComponent('openai/gpt-4o')}`)).body).toEqual({
        deleted: 1,
      });
      expect(await remaining()).toEqual([entries[4]]);
      const all = await purge();
      expect(all.status).toBe(200);
      expect(all.body).toEqual({ deleted: 1 });
      expect(await remaining()).toEqual([]);
    });

    it('leaves the rest of the shared store alone', async () => {
      await store().set('not-a-cache-entry', 'v', 60_000);
      await store().cacheSet(entries[0]!, 'v', 60_000);
      expect((await purge()).body).toEqual({ deleted: 1 });
      expect(await store().get('not-a-cache-entry')).toBe('v');
    });

    it('refuses a malformed filter with a 400 naming it', async () => {
      const response = await purge('?team_id=has%20space');
      expect(response.status).toBe(400);
      expect(response.body.error.param ?? response.body.error.message).toContain('team_id');
      expect((await purge('?model=')).status).toBe(400);
      expect((await purge('?colour=red')).status).toBe(400);
    });

    it('is for proxy administrators and the master key only', async () => {
      await gateway.admin('POST', '/ui/api/organizations', { organization_id: 'cache-org' });
      await gateway.admin('POST', '/ui/api/users', {
        user_id: 'cache-org-admin',
        organization_id: 'cache-org',
        role: 'org_admin',
      });
      await gateway.admin('POST', '/ui/api/users', { user_id: 'cache-root', role: 'proxy_admin' });
      const orgAdmin = await gateway.createKey({ user_id: 'cache-org-admin' });
      const proxyAdmin = await gateway.createKey({ user_id: 'cache-root' });
      const as = (bearer: string) =>
        fetch(`${gateway.baseUrl}/ui/api/cache`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${bearer}` },
        });
      expect((await as(orgAdmin)).status).toBe(403);
      expect((await as(proxyAdmin)).status).toBe(200);
      expect((await fetch(`${gateway.baseUrl}/ui/api/cache`, { method: 'DELETE' })).status).toBe(401);
    });
  });
});
