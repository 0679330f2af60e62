/**
 * The key part of the admin authorization matrix (issue 25, high: an organization administrator minted
 * a key for a proxy administrator of its organization and became one). Every caller role (master key,
 * proxy administrator, organization administrator of A and of B, member) mints a key for, and moves a
 * key to, a user of every role (itself, a peer administrator, a proxy administrator inside and outside
 * the organization, members of either organization), on both backends. The rest of the matrix (every
 * route × every role) is admin-authorization-matrix.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { adminOk, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

type Caller = 'master' | 'proxyAdmin' | 'orgAdmin' | 'otherOrgAdmin' | 'member';
const callers: Caller[] = ['master', 'proxyAdmin', 'orgAdmin', 'otherOrgAdmin', 'member'];

interface Person {
  role: 'proxy_admin' | 'org_admin' | 'member';
  organization: 'org-a' | 'org-b' | null;
  body: Record<string, unknown>;
}

/** Every user of the matrix: the callers' own users and a user of each role inside and outside A. */
const people: Record<string, Person> = {
  root: { role: 'proxy_admin', organization: null, body: {} },
  'root-2': { role: 'proxy_admin', organization: null, body: {} },
  'root-a': { role: 'proxy_admin', organization: 'org-a', body: { organization_id: 'org-a' } },
  'admin-a': { role: 'org_admin', organization: 'org-a', body: { organization_id: 'org-a' } },
  'admin-a2': { role: 'org_admin', organization: 'org-a', body: { team_id: 'team-a' } },
  'admin-b': { role: 'org_admin', organization: 'org-b', body: { organization_id: 'org-b' } },
  'user-a': { role: 'member', organization: 'org-a', body: { team_id: 'team-a' } },
  'member-b': { role: 'member', organization: 'org-b', body: { team_id: 'team-b' } },
};
const callerUser: Record<Exclude<Caller, 'master'>, string> = {
  proxyAdmin: 'root',
  orgAdmin: 'admin-a',
  otherOrgAdmin: 'admin-b',
  member: 'member-b',
};

/**
 * The rule: the master key may hand a key to anyone; an administrator only to itself or to a member,
 * and an organization administrator only inside its organization; a member never.
 */
function mayHandKey(caller: Caller, target: string): boolean {
  if (caller === 'master') return true;
  if (caller === 'member') return false;
  const person = people[target]!;
  const ownOrMember = target === callerUser[caller] || person.role === 'member';
  if (caller === 'proxyAdmin') return ownOrMember;
  const organization = people[callerUser[caller]]!.organization;
  return ownOrMember && person.organization === organization;
}

describe.each(await availableBackends())('the admin key authorization matrix on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;
  const keys = {} as Record<Exclude<Caller, 'master'>, string>;

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await startFakeMcpServer({ mode: 'stateless' });
    gateway = await startTestGateway({ backend });
    for (const org of ['org-a', 'org-b'])
      await adminOk(gateway, 'POST', '/ui/api/organizations', { organization_id: org });
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-a', organization_id: 'org-a' });
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-b', organization_id: 'org-b' });
    for (const [userId, person] of Object.entries(people))
      await adminOk(gateway, 'POST', '/ui/api/users', { user_id: userId, role: person.role, ...person.body });
    for (const [caller, userId] of Object.entries(callerUser))
      keys[caller as keyof typeof keys] = (await createKey(gateway, { user_id: userId })).key;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  async function as(caller: Caller, method: string, path: string, body?: unknown) {
    const bearer = caller === 'master' ? gateway.masterKey : keys[caller];
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  const keysOf = async (userId: string) =>
    (await adminOk(gateway, 'GET', `/ui/api/keys?user_id=${userId}&limit=500`)).total as number;

  it('lets each caller mint a key only for itself or a member it administers, for every role pair', async () => {
    for (const caller of callers) {
      for (const target of Object.keys(people)) {
        const before = await keysOf(target);
        const { status, body } = await as(caller, 'POST', '/ui/api/keys', { user_id: target });
        const where = `${caller} mints for ${target} → ${status} ${JSON.stringify(body).slice(0, 200)}`;
        if (mayHandKey(caller, target)) {
          expect(status, where).toBe(201);
          expect(await keysOf(target), where).toBe(before + 1);
          await adminOk(gateway, 'DELETE', `/ui/api/keys/${body.key_id}`);
        } else {
          expect(status, where).toBe(403);
          expect(await keysOf(target), where).toBe(before);
        }
      }
    }
  });

  it('lets each caller move a key only to itself or a member it administers, for every role pair', async () => {
    // Each caller moves a key it may otherwise change: a team key of its own organization.
    const teamOf: Record<Caller, string> = {
      master: 'team-a',
      proxyAdmin: 'team-a',
      orgAdmin: 'team-a',
      otherOrgAdmin: 'team-b',
      member: 'team-b',
    };
    for (const caller of callers) {
      for (const target of Object.keys(people)) {
        const { keyId } = await createKey(gateway, { team_id: teamOf[caller] });
        const { status, body } = await as(caller, 'PUT', `/ui/api/keys/${keyId}`, { user_id: target });
        const where = `${caller} moves a key to ${target} → ${status} ${JSON.stringify(body).slice(0, 200)}`;
        const stored = await adminOk(gateway, 'GET', `/ui/api/keys/${keyId}`);
        if (mayHandKey(caller, target)) {
          expect(status, where).toBe(200);
          expect(stored.user_id, where).toBe(target);
        } else {
          expect(status, where).toBe(403);
          expect(stored.user_id, where).toBeNull();
        }
        await adminOk(gateway, 'DELETE', `/ui/api/keys/${keyId}`);
      }
    }
  });

  it('refuses a key for another administrator with key_for_another_administrator, also on the LiteLLM aliases', async () => {
    const minted = await as('proxyAdmin', 'POST', '/ui/api/keys', { user_id: 'root-2' });
    expect(minted.body.error).toMatchObject({ code: 'key_for_another_administrator', param: 'user_id' });
    const peer = await as('orgAdmin', 'POST', '/ui/api/keys', { user_id: 'admin-a2' });
    expect(peer.body.error).toMatchObject({ code: 'key_for_another_administrator', param: 'user_id' });
    const alias = await as('proxyAdmin', 'POST', '/key/generate', { user_id: 'admin-b' });
    expect(alias.status).toBe(403);
    expect(alias.body.error.code).toBe('key_for_another_administrator');
    // /user/new creates a key with the user: refused before the user is created.
    const created = await as('proxyAdmin', 'POST', '/user/new', {
      user_id: 'new-admin',
      user_role: 'org_admin',
    });
    expect(created.status).toBe(403);
    expect((await gateway.admin('GET', '/ui/api/users/new-admin')).status).toBe(404);
    // The master key may: it is how the operator hands administrators their first key.
    expect((await gateway.admin('POST', '/key/generate', { user_id: 'admin-b' })).status).toBe(200);
  });

  it('refuses an organization administrator changing, blocking or deleting a proxy administrator of its organization', async () => {
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-a-ops', organization_id: 'org-a' });
    const rootKey = await createKey(gateway, { user_id: 'root-a', team_id: 'team-a-ops' });
    const { server_id } = await registerServer(gateway, {
      server_key: 'keys-matrix',
      base_url: upstream.url,
    });
    const attempts: Array<[string, string, unknown]> = [
      ['PUT', '/ui/api/users/root-a', { role: 'member' }],
      ['PUT', '/ui/api/users/root-a', { rpm_limit: 1 }],
      ['POST', '/ui/api/users', { user_id: 'root-a', organization_id: 'org-a', role: 'member' }],
      ['PUT', `/ui/api/keys/${rootKey.keyId}`, { blocked: true }],
      ['PUT', `/ui/api/keys/${rootKey.keyId}`, { user_id: 'user-a' }],
      ['POST', '/ui/api/mcp-bindings', { server_id, scope_type: 'api_key', scope_id: rootKey.keyId }],
      ['DELETE', `/ui/api/keys/${rootKey.keyId}`, undefined],
      // Deleting the team would delete the proxy administrator's key with it.
      ['DELETE', '/ui/api/teams/team-a-ops', undefined],
      ['DELETE', '/ui/api/users/root-a', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const { status, body: answer } = await as('orgAdmin', method, path, body);
      expect(status, `${method} ${path} ${JSON.stringify(answer)}`).toBe(403);
      expect(answer.error.code).toBe('outside_admin_scope');
    }
    const user = await adminOk(gateway, 'GET', '/ui/api/users/root-a');
    expect(user).toMatchObject({ role: 'proxy_admin', rpm_limit: null });
    expect(await adminOk(gateway, 'GET', `/ui/api/keys/${rootKey.keyId}`)).toMatchObject({
      blocked: false,
      user_id: 'root-a',
    });
    expect((await adminOk(gateway, 'GET', '/ui/api/mcp-bindings')).total).toBe(0);
    // The proxy administrator's key still administers the gateway; the org admin's own team still works.
    const settings = await fetch(`${gateway.baseUrl}/ui/api/settings`, {
      headers: { authorization: `Bearer ${rootKey.key}` },
    });
    expect(settings.status).toBe(200);
    expect((await as('orgAdmin', 'PUT', '/ui/api/teams/team-a', { rpm_limit: 50 })).status).toBe(200);
  });
});
